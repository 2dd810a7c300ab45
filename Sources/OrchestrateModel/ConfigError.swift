/// A problem in orchestrate.yml, or in what it names (a listing command, feature files, a package to build), pointing
/// at file:line:column. Exit 2.
package struct ConfigError: CodedError {
    package typealias Code = ErrorCode<ConfigError>

    package let code: Code
    package let file: String
    package let line: Int?
    package let column: Int?
    package let message: String

    package init(_ code: Code, file: String, line: Int? = nil, column: Int? = nil, _ message: String) {
        self.code = code
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

extension ErrorCode where Domain == ConfigError {
    /// The file is missing, cannot be read, or is not UTF-8 text.
    package static let unreadable = Self("unreadable")
    /// Not valid as written: YAML, a key, a value's kind or range, a feature file's Gherkin.
    package static let invalid = Self("invalid")
    /// Nothing to run: no scenarios, a listing that printed none, a pattern or filter that matches none.
    package static let noScenarios = Self("noScenarios")
    /// A test id given twice (by two sources, or twice by one listing).
    package static let duplicateID = Self("duplicateID")
    /// A test id from outside orchestrate.yml that breaks its rule (a control character).
    package static let badID = Self("badID")
    /// A command the config names (a listing, a build, simctl) failed or left nothing to use.
    package static let commandFailed = Self("commandFailed")
}
