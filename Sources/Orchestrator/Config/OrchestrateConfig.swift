import Foundation
import MockServer
import OrchestrateModel

import struct OrchestrateKit.OrchestrateEnvironment

/// orchestrate.yml, with its documented defaults.
package struct OrchestrateConfig: Sendable {
    /// `project:`, the suite's name in a database several suites share.
    package var explicitProject: String?
    /// The suite's name: `project:`, else the name of the config file's folder.
    package var project: String { explicitProject ?? (directory as NSString).lastPathComponent }
    /// Worker slots on this host. Default: the number of processor cores.
    package var workers: Int = ProcessInfo.processInfo.activeProcessorCount
    /// Re-runs of a failed attempt. Default 0.
    package var retries: Int = 0
    /// A postgres:// URL; default the embedded cluster under `.orchestrate/postgres`.
    package var database: String?
    /// Where JUnit and other reports go, relative to the config file. Default `.orchestrate/reports`.
    package var reports: String = ".orchestrate/reports"
    /// A lease not renewed for this long is taken back (its worker is presumed dead). Default 30 s.
    package var lease: Duration = .seconds(30)
    /// `artifacts.max-bytes`: bytes of the files an attempt kept (its artifacts folder, its logs when it did not pass)
    /// stored in the database per attempt, for every host to read; the rest is recorded by name and size. Default 10 MiB;
    /// 0 stores names and sizes only.
    package var artifactBytes: Int64 = 10 << 20
    package var suite = Suite()
    package var mock = Mock()
    package var quarantine = Quarantine()
    package var redact = Redact()
    /// The folder holding the config file: commands run there and relative paths start there.
    package var directory: String
    /// The config file as given (for messages).
    package var path: String
    /// The line each setting the file gives is on, by key (`workers`, `mock.mode`): where ``RunSettings`` says a value
    /// came from.
    package var lines: [String: Int] = [:]

    /// Automatic quarantine: after every run, a scenario whose flakiness score over `window` reaches `threshold` is
    /// quarantined (its failures reported, not fatal), and released when its score falls below it again. Scenarios
    /// quarantined by hand (`orchestrate quarantine add`) stay until removed.
    package struct Quarantine: Sendable {
        /// Default 0.3; `off` disables automatic quarantine.
        package var threshold: Double? = 0.3
        /// Default 14 days.
        package var window: Duration = .seconds(14 * 86_400)
    }

    /// Secrets of the environment: the values of variables named in `redact.env`, and of those whose names look secret
    /// (``Secrets/looksSecret(_:)``), are never stored and are replaced wherever they appear (exchanges, output, reports).
    package struct Redact: Sendable {
        package var environment: Set<String> = []

        /// Whether the variable `name` holds a secret.
        package func isSecret(_ name: String) -> Bool {
            environment.contains(name) || Secrets.looksSecret(name)
        }
    }

    /// The suite's secret environment values (``Redact``), with those of `inherited` (the environment orchestrate runs
    /// in, which the scenarios inherit) to be scrubbed.
    package func secretEnvironment(inherited: [String: String]) -> SecretEnvironment {
        var secrets = SecretEnvironment()
        secrets.common = suite.environment.filter { redact.isSecret($0.key) }
        for entry in suite.scenarios {
            let own = entry.environment.filter { redact.isSecret($0.key) }
            if !own.isEmpty { secrets.byScenario[entry.id] = own }
        }
        let values = secrets.common.values + secrets.byScenario.values.flatMap(\.values) + inherited.filter { redact.isSecret($0.key) }.values
        secrets.secrets = Secrets(values)
        return secrets
    }

    package struct Suite: Sendable {
        /// Command template for scenarios without their own: `{id} {name} {uri} {line}` are filled in.
        package var command: String?
        /// Time limit per attempt. Default 5 min.
        package var timeout: Duration = .seconds(300)
        /// Added to every scenario's environment.
        package var environment: [String: String] = [:]
        package var scenarios: [Entry] = []
        /// Glob patterns of feature files (`Features/**/*.feature`): every pickle becomes a scenario.
        package var gherkin: [String] = []
        /// Where `gherkin` is in the config file.
        package var gherkinLine = 0
        /// A command that prints test ids, one per line (``TestListing``): every id becomes a scenario.
        package var list: String?
        /// Where `list` is in the config file.
        package var listLine = 0
        /// `suite.results`: the report every scenario's command writes into its artifacts folder, which gives each test
        /// its result (``ResultsFormat``).
        package var results: ResultsFormat?
        /// `suite.batch`: bounds of the batches a `{ids}` command (or `suite.swiftpm`) runs.
        package var batch = BatchBounds()
        /// `suite.swiftpm`: a Swift package's tests (``SwiftPMSuite``).
        package var swiftpm: SwiftPM?
        /// `suite.xcodebuild`: an Xcode project's tests (``XcodeSuite``).
        package var xcodebuild: Xcode?

        package struct Xcode: @unchecked Sendable {
            package var project: String?
            package var workspace: String?
            package var scheme = ""
            package var testPlan: String?
            /// The simulator device every slot's simulator is cloned from (`simctl clone`), e.g. `iPhone 16`.
            package var device = ""
            /// Each slot's simulator is erased before every attempt but its first.
            package var erase = false
            package var filter: Regex<AnyRegexOutput>?
            package var build = true
            /// Where `xcodebuild` is in the config file.
            package var line: Int
        }

        package struct BatchBounds: Sendable {
            /// Tests per process at most. Default 10.
            package var size = 10
            /// Expected seconds per process at most (from history; tests never seen count as nothing). Default 60.
            package var seconds = 60
        }

        package struct SwiftPM: @unchecked Sendable {
            /// The package's folder, relative to the config's. Default `.`.
            package var package = "."
            /// Only tests whose ids it matches (anywhere in the id, as `swift test --filter`).
            package var filter: Regex<AnyRegexOutput>?
            /// Whether each host builds the tests first. Default true; false when an earlier step built them.
            package var build = true
            /// Where `swiftpm` is in the config file.
            package var line: Int
        }

        package struct Entry: Sendable {
            package var id: String
            package var name: String?
            package var command: String?
            package var tags: [String] = []
            package var timeout: Duration?
            package var environment: [String: String] = [:]
            /// Where the entry starts in the config file.
            package var line: Int
        }
    }

    package struct Mock: Sendable {
        /// Default replay.
        package var mode: Mode = .replay
        /// Where cassettes live, relative to the config file. Default `Recordings`.
        package var recordings: String = "Recordings"
        /// Hosts, matching, redaction, rewriting and stubs: what every mock server of the run does.
        package var server = MockConfiguration()
    }

    package init(directory: String, path: String) {
        self.directory = directory
        self.path = path
    }

    /// A path of the config (reports, recordings), absolute: relative ones start at the config's folder.
    package func resolve(_ path: String) -> String {
        Self.resolve(path, against: directory)
    }

    /// `path` made absolute against `directory`.
    package static func resolve(_ path: String, against directory: String) -> String {
        path.hasPrefix("/") ? path : URL(fileURLWithPath: directory).appendingPathComponent(path).standardizedFileURL.path
    }

    /// The scenarios as they run, templates filled in: the listed ones in config order, then every test id that
    /// `suite.list` prints (in its order), then every pickle of the feature files `suite.gherkin` names (files in path
    /// order, pickles in file order).
    package func scenarios() async throws -> [Scenario] {
        var scenarios = suite.scenarios.map { entry in
            let name = entry.name ?? entry.id
            let command = entry.command ?? CommandTemplate.fill(suite.command ?? "", id: entry.id, name: name, uri: path, line: entry.line)
            return Scenario(
                id: entry.id, name: name, command: command, tags: entry.tags,
                timeoutMilliseconds: (entry.timeout ?? suite.timeout).wholeMilliseconds,
                environment: suite.environment.merging(entry.environment) { $1 }, uri: path, line: entry.line
            )
        }
        var seen = Set(scenarios.map(\.id))
        if let list = suite.list {
            let ids = try await TestListing.ids(
                command: list, directory: directory, environment: suite.environment, timeout: suite.timeout, file: path, line: suite.listLine)
            // A command that takes `{ids}` runs listed tests in batches; one test alone is a batch of one.
            let template = suite.command ?? ""
            let batch =
                Batch.takesIDs(template)
                ? Batch(command: template, size: suite.batch.size, milliseconds: Int64(suite.batch.seconds) * 1000) : nil
            for id in ids {
                guard seen.insert(id).inserted else {
                    throw ConfigError(file: path, line: suite.listLine, "suite.list printed \"\(id)\", which suite.scenarios already has")
                }
                scenarios.append(
                    Scenario(
                        id: id, name: id,
                        command: batch?.command(for: [id]) ?? CommandTemplate.fill(template, id: id, name: id, uri: path, line: suite.listLine),
                        timeoutMilliseconds: suite.timeout.wholeMilliseconds, environment: suite.environment, uri: path, line: suite.listLine,
                        batch: batch
                    ))
            }
        }
        var adapted: [(scenarios: [Scenario], line: Int)] = []
        if let swiftpm = suite.swiftpm { adapted.append((try await SwiftPMSuite.scenarios(swiftpm, config: self), swiftpm.line)) }
        if let xcode = suite.xcodebuild { adapted.append((try await XcodeSuite.scenarios(xcode, config: self), xcode.line)) }
        for (found, line) in adapted {
            for scenario in found {
                guard seen.insert(scenario.id).inserted else {
                    throw ConfigError(file: path, line: line, "a test \"\(scenario.id)\" is listed twice")
                }
                scenarios.append(scenario)
            }
        }
        if let results = suite.results {
            for index in scenarios.indices where scenarios[index].results == nil { scenarios[index].results = results }
        }
        guard !suite.gherkin.isEmpty else { return scenarios }
        for pickle in try FeatureDiscovery.pickles(patterns: suite.gherkin, in: directory, config: path, line: suite.gherkinLine) {
            let id = FeatureDiscovery.uniqueID(pickle.stableID, seen: &seen)
            let environment = suite.environment.merging([
                OrchestrateEnvironment.Variable.gherkinURI.rawValue: pickle.uri,
                OrchestrateEnvironment.Variable.gherkinLine.rawValue: "\(pickle.line)",
                OrchestrateEnvironment.Variable.pickle.rawValue: pickle.json,
            ]) { $1 }
            scenarios.append(
                Scenario(
                    id: id, name: pickle.name,
                    command: CommandTemplate.fill(suite.command ?? "", id: id, name: pickle.name, uri: pickle.uri, line: pickle.line),
                    tags: pickle.tags, timeoutMilliseconds: suite.timeout.wholeMilliseconds,
                    environment: environment, uri: pickle.uri, line: pickle.line, definitionLine: pickle.scenarioLine,
                    results: suite.results
                ))
        }
        return scenarios
    }
}
