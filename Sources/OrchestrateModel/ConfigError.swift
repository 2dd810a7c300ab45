/// A problem in orchestrate.yml (or in flags that refer to it), pointing at file:line:column.
package struct ConfigError: Error, CustomStringConvertible, Sendable {
    package let file: String
    package let line: Int?
    package let column: Int?
    package let message: String

    package init(file: String, line: Int? = nil, column: Int? = nil, _ message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.message = message
    }

    /// `orchestrate.yml:12:5: unknown key "workrs" …`
    package var description: String {
        var location = file
        if let line { location += ":\(line)" }
        if let line, let column, line > 0 { location += ":\(column)" }
        return "\(location): \(message)"
    }
}
