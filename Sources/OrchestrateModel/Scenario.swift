/// A scenario as the run executes it: a command with its own limits and environment.
package struct Scenario: Sendable, Codable, Hashable, Identifiable {
    /// Stable across runs: history, quarantine and expected durations hang on it.
    package var id: String
    package var name: String
    /// The shell command (run with `/bin/sh -c`), templates already filled in.
    package var command: String
    package var tags: [String]
    /// Milliseconds before the whole process group is ended.
    package var timeoutMilliseconds: Int64
    /// Added to the environment of every attempt.
    package var environment: [String: String]
    /// Where the scenario is defined (file and 1-based line), for messages and `{uri}`/`{line}`.
    package var uri: String?
    package var line: Int?
    /// For an example row of a Scenario Outline, the outline's own line (`file:line` of the outline selects
    /// all its rows).
    package var definitionLine: Int?

    package init(
        id: String,
        name: String,
        command: String,
        tags: [String] = [],
        timeoutMilliseconds: Int64,
        environment: [String: String] = [:],
        uri: String? = nil,
        line: Int? = nil,
        definitionLine: Int? = nil
    ) {
        self.id = id
        self.name = name
        self.command = command
        self.tags = tags
        self.timeoutMilliseconds = timeoutMilliseconds
        self.environment = environment
        self.uri = uri
        self.line = line
        self.definitionLine = definitionLine
    }
}

extension Scenario {
    /// The scenario's random seed (`ORCHESTRATE_SEED`, kept in its cassette): stable across runs, so a
    /// failure can be reproduced with the same randoms.
    package var seed: UInt32 {
        var hash: UInt32 = 0x811c_9dc5
        for byte in id.utf8 {
            hash ^= UInt32(byte)
            hash = hash &* 0x0100_0193
        }
        return hash
    }
}

extension Scenario {
    /// The mode the scenario runs in: a mode tag on the scenario (`record`, `replay`, `live`, `mock`,
    /// `hybrid`, with or without `@`) wins over the run's mode.
    package func mode(inRun runMode: Mode) -> Mode {
        for tag in tags {
            let name = tag.hasPrefix("@") ? String(tag.dropFirst()) : tag
            if let mode = Mode(rawValue: name.lowercased()), mode != .compare { return mode }
        }
        return runMode
    }
}
