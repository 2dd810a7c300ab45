import Coordinator
import Foundation
import Logging
import MockServer
import OrchestrateModel
import Suites

/// Where a run's setting came from: said by `--verbose` and by the errors about it.
package enum SettingSource: Sendable, Equatable, CustomStringConvertible {
    /// A command-line option (`--workers`).
    case flag(String)
    /// An environment variable.
    case environment(String)
    /// orchestrate.yml as given, and the line the value is on.
    case file(String, line: Int?)
    /// The documented default, and what it is.
    case standard(String)

    package var description: String {
        switch self {
        case .flag(let flag): flag
        case .environment(let name): name
        case .file(let path, let line): line.map { "\(path):\($0)" } ?? path
        case .standard(let what): "default: \(what)"
        }
    }
}

/// A setting's value and where it came from.
package struct Setting<Value: Sendable>: Sendable {
    package var value: Value
    package var source: SettingSource

    package init(_ value: Value, from source: SettingSource) {
        self.value = value
        self.source = source
    }

    /// The flag's value when it was given, else the file's (with its line), else the default.
    static func resolve(
        flag: (name: String, value: Value?), file: (key: String, value: Value), in config: OrchestrateConfig,
        standard: String
    ) -> Setting {
        if let value = flag.value { return Setting(value, from: .flag(flag.name)) }
        if let line = config.lines[file.key] { return Setting(file.value, from: .file(config.path, line: line)) }
        return Setting(file.value, from: .standard(standard))
    }
}

/// Everything `orchestrate run` and `orchestrate agent` go by, resolved once from the flags, the environment and
/// orchestrate.yml (a flag wins over the environment, which wins over the file), each value that more than one of them
/// can give with where it came from. Every phase of a run (``RunWork``, ``RunExecution``, the judge and the reports)
/// receives it; none reads the flags or the file again.
package struct RunSettings: Sendable {
    /// What this process does with a run.
    package enum Role: Sendable, Equatable {
        /// Plans a run of its own of the scenarios ``RunSettings/selection`` selects (`run`).
        case plan
        /// Takes up an interrupted run (`run --resume RUN_ID`).
        case resume(UUID)
        /// Plans the run under a key or joins it (`run --join KEY`); an agent only joins it (`agent --join KEY`).
        case join(key: String, agent: Bool)
        /// Works a run planned elsewhere (`agent --run RUN_ID`).
        case attach(UUID)
        /// Serves run after run of the project until it is stopped (`agent --forever`).
        case serve

        /// Whether this process may plan a run from the suite (and so needs orchestrate.yml and the git facts).
        var plans: Bool {
            switch self {
            case .plan, .join(_, agent: false): true
            case .resume, .join, .attach, .serve: false
            }
        }
    }

    package var role: Role
    /// The scenarios a planned run takes (`--only`, `--tags`).
    package var selection: ScenarioSelection
    /// Worker slots on this host.
    package var workers: Setting<Int>
    /// The mock servers' mode (a scenario's mode tag wins).
    package var mode: Setting<Mode>
    /// Re-runs of a failed attempt.
    package var retries: Setting<Int>
    /// Which failures are retried: any, or those with evidence of a cause outside the test.
    package var retryWhen: Setting<RetryWhen>
    /// A lease not renewed for this long is taken back.
    package var lease: Setting<Duration>
    /// The reports folder, absolute.
    package var reports: Setting<String>
    /// `--junit`, absolute.
    package var junit: String?
    /// GitHub's annotations and job summary (appended to the file GITHUB_STEP_SUMMARY names, when it does), written by
    /// the process that judges the run: `--annotations github`, else GITHUB_ACTIONS=true.
    package var annotations: Setting<Bool>
    /// Where GitHub wants the job summary (GITHUB_STEP_SUMMARY), and the workflow run's page, with annotations on.
    package var stepSummary: String?
    package var workflowRunURL: String?
    /// The token GitHub's workflow commands are stopped under while the run prints what came from outside.
    package var commandsToken = UUID().uuidString.lowercased()
    /// `--summary`, absolute: the run in Markdown.
    package var summary: String?
    /// The database the run is kept in.
    package var database: DatabaseSelection
    /// The name this process's share of a joined run is kept under.
    package var node: Setting<String>
    /// Flaky passes, nondeterministic verdicts and quarantined failures fail the run too.
    package var strict: Bool
    /// A node's re-run of its share of a finished joined run takes only what failed.
    package var failedOnly: Bool
    /// `--detect-new-flakes`: new tests run extra times unless more than this share of the suite is new; `nil`: off.
    package var newTestsShare: Double?
    /// `--changed-since REV` or `--changed FILE…`: the run takes only the tests the change can break.
    package var change: ChangeSelection.Change?
    /// `--sample`: the share of the tests a selection leaves out that run all the same.
    package var sample: Double
    /// `--order`: which tests the slots take first.
    package var order: RunOptions.RunOrder
    /// `--fail-fast N`: every host of the run stops it after N genuine failures (retries spent, not quarantined).
    package var failFast: Int?
    /// How long an agent waits for the run under its join key to be planned.
    package var planWait: Duration
    /// Where Prometheus metrics are served, when asked for (port 0: one the system picks).
    package var metrics: (address: String, port: Int)?
    /// SIGINT and SIGTERM stop the run's slots (false for a run inside another program, whose signals are its own).
    package var trapsSignals: Bool
    /// The suite as orchestrate.yml describes it. Private: what a phase needs of it has a name below, resolved.
    private let file: OrchestrateConfig

    /// The suite's name in the database.
    package var project: String { file.project }
    /// The folder holding orchestrate.yml: commands run there and relative paths start there.
    package var directory: String { file.directory }
    /// orchestrate.yml as given.
    package var configPath: String { file.path }
    /// How the suite's scenarios are described: commands, listing, Gherkin, SwiftPM, xcodebuild.
    package var suite: SuiteDefinition { file.suite }
    /// Whether the run sizes the suite's batches from what its runner costs (`suite.batch: auto`).
    package var sizesBatches: Bool { file.suite.batch.auto }
    /// What every mock server of the run does (hosts, matching, redaction, rewriting, stubs).
    package var mockServer: MockConfiguration { file.mock.server }
    /// Where cassettes live, absolute.
    package var recordings: String { file.resolve(file.mock.recordings) }
    /// Automatic quarantine after a judged run.
    package var quarantine: OrchestrateConfig.Quarantine { file.quarantine }
    /// Which environment variables hold secrets.
    package var redact: OrchestrateConfig.Redact { file.redact }
    /// Bytes of an attempt's kept files stored in the database.
    package var artifactBytes: Int64 { file.artifactBytes }
    /// What changed files mean to a selection (`selection:`).
    package var selectionRules: OrchestrateConfig.Selection { file.selection }

    /// Reads orchestrate.yml (when this process may plan; otherwise the defaults when there is none) and merges it with
    /// `options` and `environment`. Throws ``ConfigError`` for the file and ``StoreError`` for a database URL (exit 2).
    package static func resolve(
        _ options: RunOptions, environment: [String: String] = ProcessInfo.processInfo.environment,
        currentDirectory: String = FileManager.default.currentDirectoryPath
    ) throws -> RunSettings {
        let role = role(of: options)
        let file = try ConfigLoader.load(path: options.configPath, required: role.plans)
        let reports = Setting.resolve(
            flag: ("--reports", options.reportsDirectory), file: ("reports", file.reports), in: file,
            standard: ".orchestrate/reports")
        let annotations: Setting<Bool> =
            if let choice = options.annotations {
                Setting(choice == .github, from: .flag("--annotations"))
            } else if environment["GITHUB_ACTIONS"] == "true" {
                Setting(true, from: .environment("GITHUB_ACTIONS"))
            } else {
                Setting(false, from: .standard("none"))
            }
        return RunSettings(
            role: role,
            selection: ScenarioSelection(only: options.only, tags: options.tags),
            workers: Setting.resolve(
                flag: ("--workers", options.workers), file: ("workers", file.workers), in: file,
                standard: "the core count"),
            mode: Setting.resolve(
                flag: ("--mode", options.mode), file: ("mock.mode", file.mock.mode), in: file, standard: "replay"),
            retries: Setting.resolve(
                flag: ("--retries", options.retries), file: ("retries", file.retries), in: file, standard: "none"),
            retryWhen: Setting.resolve(
                flag: ("--retry-when", options.retryWhen), file: ("retries", file.retryWhen), in: file, standard: "any"),
            lease: Setting.resolve(
                flag: ("--lease", options.lease), file: ("lease", file.lease), in: file, standard: "30 s"),
            reports: Setting(file.resolve(reports.value), from: reports.source),
            junit: options.junitPath.map { OrchestrateConfig.resolve($0, against: currentDirectory) },
            annotations: annotations,
            stepSummary: annotations.value ? environment["GITHUB_STEP_SUMMARY"].flatMap { $0.isEmpty ? nil : $0 } : nil,
            workflowRunURL: annotations.value ? Self.workflowRunURL(environment) : nil,
            summary: options.summaryPath.map { OrchestrateConfig.resolve($0, against: currentDirectory) },
            database: try DatabaseSelection.resolve(
                flag: options.database, configured: file.database, projectDirectory: file.directory,
                environment: environment),
            node: options.node.map { Setting($0, from: .flag("--node")) }
                ?? Setting(HostFacts.hostName, from: .standard("the host name")),
            strict: options.strict, failedOnly: options.failedOnly, newTestsShare: options.newTestsShare,
            change: options.changedSince.map { .since($0) }
                ?? (options.changed.isEmpty
                    ? nil : .files(options.changed.map { OrchestrateConfig.resolve($0, against: currentDirectory) })),
            sample: options.sample, order: options.order, failFast: options.failFast,
            planWait: options.planWait,
            metrics: options.metricsPort.map { (options.metricsAddress, $0) }, trapsSignals: options.trapsSignals,
            file: file
        )
    }

    /// The workflow run's page on GitHub (where its artifacts are), from the variables Actions sets.
    static func workflowRunURL(_ environment: [String: String]) -> String? {
        guard let server = environment["GITHUB_SERVER_URL"], let repository = environment["GITHUB_REPOSITORY"],
            let run = environment["GITHUB_RUN_ID"], !server.isEmpty, !repository.isEmpty, !run.isEmpty
        else { return nil }
        return "\(server)/\(repository)/actions/runs/\(run)"
    }

    private static func role(of options: RunOptions) -> Role {
        if let resume = options.resume { return .resume(resume) }
        if let attach = options.attach { return .attach(attach) }
        if options.forever { return .serve }
        if let key = options.joinKey { return .join(key: key, agent: options.agent) }
        return .plan
    }

    /// The scenarios of the suite as they run (lists commands, builds test bundles, reads feature files).
    package func scenarios() async throws -> [Scenario] { try await SuiteSources(suite).scenarios(file.suiteContext) }

    /// Builds what the suite's tests need on this host (a Swift package's or an Xcode project's tests).
    func buildTests() async throws { try await SuiteSources(suite).prepare(file.suiteContext) }

    /// What the suite's slots need around their attempts besides their mock servers (an Xcode project's simulators).
    func attemptHooks(runID: UUID) -> [any AttemptHooks] {
        SuiteSources(suite).attemptHooks(file.suiteContext, runID: runID)
    }

    /// The suite's secret environment values, with those of `inherited` to be scrubbed.
    func secretEnvironment(inherited: [String: String]) -> SecretEnvironment {
        file.secretEnvironment(inherited: inherited)
    }

    /// Said with `--verbose`: every setting that more than one place can give, and where its value came from.
    func log(to logger: Logger) {
        logger.debug(
            "run settings",
            metadata: [
                "workers": "\(workers.value) (\(workers.source))", "mode": "\(mode.value.rawValue) (\(mode.source))",
                "retries": "\(retries.value) (\(retries.source))",
                "retries.when": "\(retryWhen.value.rawValue) (\(retryWhen.source))",
                "lease": "\(lease.value.components.seconds) s (\(lease.source))",
                "reports": "\(reports.value) (\(reports.source))",
                "database": "\(database.endpoint) (\(database.source.rawValue))",
                "node": "\(node.value) (\(node.source))",
                "annotations": "\(annotations.value ? "github" : "none") (\(annotations.source))",
            ])
    }
}
