import Foundation
import MockServer
import OrchestrateModel

/// orchestrate.yml, with its documented defaults.
public struct OrchestrateConfig: Sendable {
    /// Worker slots on this host. Default: the number of processor cores.
    public var workers: Int = ProcessInfo.processInfo.activeProcessorCount
    /// Re-runs of a failed attempt. Default 0.
    public var retries: Int = 0
    /// A postgres:// URL; default the embedded cluster under `.orchestrate/postgres`.
    public var database: String?
    /// Where JUnit and other reports go, relative to the config file. Default `.orchestrate/reports`.
    public var reports: String = ".orchestrate/reports"
    /// A lease not renewed for this long is taken back (its worker is presumed dead). Default 30 s.
    public var lease: Duration = .seconds(30)
    public var suite = Suite()
    public var mock = Mock()
    /// The folder holding the config file: commands run there and relative paths start there.
    public var directory: String
    /// The config file as given (for messages).
    public var path: String

    public struct Suite: Sendable {
        /// Command template for scenarios without their own: `{id} {name} {uri} {line}` are filled in.
        public var command: String?
        /// Time limit per attempt. Default 5 min.
        public var timeout: Duration = .seconds(300)
        /// Added to every scenario's environment.
        public var environment: [String: String] = [:]
        public var scenarios: [Entry] = []

        public struct Entry: Sendable {
            public var id: String
            public var name: String?
            public var command: String?
            public var tags: [String] = []
            public var timeout: Duration?
            public var environment: [String: String] = [:]
            /// Where the entry starts in the config file.
            public var line: Int
        }
    }

    public struct Mock: Sendable {
        /// Default replay.
        public var mode: Mode = .replay
        /// Where cassettes live, relative to the config file. Default `Recordings`.
        public var recordings: String = "Recordings"
        /// Hosts, matching, redaction, rewriting and stubs: what every mock server of the run does.
        public var server = MockConfiguration()
    }

    public init(directory: String, path: String) {
        self.directory = directory
        self.path = path
    }

    /// The scenarios as they run, templates filled in, in config order.
    public func scenarios() -> [Scenario] {
        suite.scenarios.map { entry in
            let name = entry.name ?? entry.id
            let command = entry.command ?? CommandTemplate.fill(suite.command ?? "", id: entry.id, name: name, uri: path, line: entry.line)
            var environment = suite.environment
            for (key, value) in entry.environment { environment[key] = value }
            return Scenario(
                id: entry.id, name: name, command: command, tags: entry.tags,
                timeoutMilliseconds: (entry.timeout ?? suite.timeout).wholeMilliseconds,
                environment: environment, uri: path, line: entry.line
            )
        }
    }
}

/// Fills `{id}`, `{name}`, `{uri}` and `{line}` into a command template, shell-quoting values that need it.
public enum CommandTemplate {
    public static func fill(_ template: String, id: String, name: String, uri: String, line: Int) -> String {
        template
            .replacingOccurrences(of: "{id}", with: quote(id))
            .replacingOccurrences(of: "{name}", with: quote(name))
            .replacingOccurrences(of: "{uri}", with: quote(uri))
            .replacingOccurrences(of: "{line}", with: "\(line)")
    }

    /// A word the shell reads back unchanged.
    public static func quote(_ value: String) -> String {
        let safe = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@%+,")
        if !value.isEmpty, value.allSatisfy({ safe.contains($0) }) { return value }
        return "'" + value.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }
}
