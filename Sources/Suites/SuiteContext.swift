import Foundation

/// Where a suite is and how orchestrate.yml describes it: what every ``SuiteSource`` works from.
package struct SuiteContext: Sendable {
    /// The folder holding orchestrate.yml: commands run there and relative paths start there.
    package var directory: String
    /// orchestrate.yml as given: errors name it, with the line of what they are about.
    package var configPath: String
    package var definition: SuiteDefinition
    /// Said to the user while a source works for long (a build): a line on stderr from the command line.
    package var note: @Sendable (String) -> Void

    package init(
        directory: String, configPath: String, definition: SuiteDefinition, note: @escaping @Sendable (String) -> Void
    ) {
        self.directory = directory
        self.configPath = configPath
        self.definition = definition
        self.note = note
    }

    /// A path of the suite, absolute: relative ones start at the config's folder.
    package func resolve(_ path: String) -> String {
        Self.resolve(path, against: directory)
    }

    /// `path` made absolute against `directory`.
    package static func resolve(_ path: String, against directory: String) -> String {
        path.hasPrefix("/")
            ? path : URL(fileURLWithPath: directory).appendingPathComponent(path).standardizedFileURL.path
    }

    /// The test ids `command` prints (``TestListing/ids``), run as ``output(of:timeout:line:what:)`` runs commands.
    func ids(of command: String, line: Int, what: String = "suite.list") async throws -> [String] {
        try await TestListing.ids(
            command: command, directory: directory, environment: definition.environment, timeout: definition.timeout,
            file: configPath, line: line, what: what)
    }

    /// What `command` prints, run by `sh` in the config's folder with the suite's environment (``TestListing/output``).
    func output(
        of command: String, timeout: Duration? = nil, line: Int, what: String
    ) async throws -> (text: String, said: String) {
        try await TestListing.output(
            of: command, directory: directory, environment: definition.environment,
            timeout: timeout ?? definition.timeout, file: configPath,
            line: line, what: what)
    }
}
