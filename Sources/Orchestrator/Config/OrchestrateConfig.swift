import Foundation
import MockServer
import OrchestrateModel
import Suites

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
    /// Which failures the retries are for (`retries.when`).
    package var retryWhen = RetryWhen.any
    /// A postgres:// URL; default the embedded cluster under `.orchestrate/postgres`.
    package var database: String?
    /// Where JUnit and other reports go, relative to the config file. Default `.orchestrate/reports`.
    package var reports: String = ".orchestrate/reports"
    /// A lease not renewed for this long is taken back (its worker is presumed dead). Default 30 s.
    package var lease: Duration = .seconds(30)
    /// `artifacts.max-bytes`: bytes of the files an attempt kept (its artifacts folder, its logs when it did not pass)
    /// stored in the database per attempt, for every host to read; the rest is recorded by name and size. Default 10
    /// MiB; 0 stores names and sizes only.
    package var artifactBytes: Int64 = 10 << 20
    package var suite = SuiteDefinition()
    package var mock = Mock()
    package var quarantine = Quarantine()
    package var redact = Redact()
    /// `selection`: what changed files mean to `run --changed-since` (globs relative to the config file's folder).
    package var selection = Selection()
    /// The folder holding the config file: commands run there and relative paths start there.
    package var directory: String
    /// The config file as given (for messages).
    package var path: String
    /// False for the defaults a command that reads history uses where there is no config file.
    package var fromFile = true
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

    /// `selection:` for `run --changed-since`: files whose change runs every test (`everything`), files no test can be
    /// broken by (`ignore`), and files that serve endpoints (`endpoints`: a change to one runs the tests that called
    /// them). Globs as ``PathGlob`` reads them, relative to the config file's folder.
    package struct Selection: Sendable {
        package var everything: [String] = []
        package var ignore: [String] = []
        package var endpoints: [(files: [String], endpoints: [EndpointPattern])] = []
    }

    /// Secrets of the environment: the values of variables named in `redact.env`, and of those whose names look secret
    /// (``Secrets/looksSecret(_:)``), are never stored and are replaced wherever they appear (exchanges, output,
    /// reports).
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
        let values =
            secrets.common.values + secrets.byScenario.values.flatMap(\.values)
            + inherited.filter { redact.isSecret($0.key) }.values
        secrets.secrets = Secrets(values)
        return secrets
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
        SuiteContext.resolve(path, against: directory)
    }

    /// Where the suite is and how it is described, for its ``SuiteSource``s; what they say while they work (a build) is
    /// a line on stderr.
    package var suiteContext: SuiteContext {
        SuiteContext(directory: directory, configPath: path, definition: suite) { Console.detached.note($0) }
    }
}
