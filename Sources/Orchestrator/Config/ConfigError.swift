/// A problem in orchestrate.yml (or in flags that refer to it), pointing at file:line:column.
public struct ConfigError: Error, CustomStringConvertible, Sendable {
    public let file: String
    public let line: Int?
    public let column: Int?
    public let message: String

    public init(file: String, line: Int? = nil, column: Int? = nil, _ message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.message = message
    }

    /// `orchestrate.yml:12:5: unknown key "workrs" …`
    public var description: String {
        var location = file
        if let line { location += ":\(line)" }
        if let line, let column, line > 0 { location += ":\(column)" }
        return "\(location): \(message)"
    }
}
