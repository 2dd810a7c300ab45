import Analysis
import Coordinator
import Foundation
import struct Gherkin.TagExpression
import Logging
import OrchestrateModel
import Reports
import ServiceLifecycle
import Store
import Synchronization
import UnixSignals

/// What `orchestrate run` was asked to do.
package struct RunOptions: Sendable {
    package var configPath = "orchestrate.yml"
    package var workers: Int?
    package var mode: Mode?
    package var retries: Int?
    package var only: [String] = []
    /// A Cucumber tag expression (`@smoke and not @wip`) that selects scenarios by their tags.
    package var tags: String?
    package var junitPath: String?
    package var reportsDirectory: String?
    package var database: String?
    package var resume: UUID?
    package var strict = false
    package var lease: Duration?
    package var progress: ProgressChoice = .automatic

    package enum ProgressChoice: String, Sendable, CaseIterable {
        case automatic = "auto"
        case live
        case lines
        case none
    }

    package init() {}
}

/// `orchestrate run`: plan (or resume) a run in the database, work it with the coordinator, report.
package enum RunOrchestration {
    /// Runs and returns the process exit code (DESIGN.md: 0 passed, 1 a scenario failed, 130 interrupted).
    /// Throws ``ConfigError``/``UsageError`` (exit 2) and store or coordinator failures (exit 3).
    package static func run(_ options: RunOptions, logger: Logger) async throws -> Int32 {
        let config = try loadConfig(options.configPath, required: options.resume == nil)
        // Asking git (two processes in a repository) overlaps with reading the scenarios and reaching the database.
        let gitRevision = options.resume == nil ? Task { await HostFacts.gitRevision(in: config.directory) } : nil
        let selection = try DatabaseSelection.resolve(flag: options.database, configured: config.database, projectDirectory: config.directory)
        if let cluster = selection.cluster { try await cluster.startDetached(logger: logger) }
        let lease = options.lease ?? config.lease
        return try await Database.with(selection.endpoint, logger: logger) { database in
            let runs = RunStore(database: database)
            var queue = AttemptQueue(database: database, lease: lease)
            queue.passVerdict = VerdictRule.singleLanePass
            let runID: UUID
            let workingDirectory: String
            let startedAt: Date
            let unsettled: [String: Int64?]
            let workers = options.workers ?? config.workers
            let mode = options.mode ?? config.mock.mode
            if let resume = options.resume {
                guard let summary = try await runs.summary(resume) else {
                    throw UsageError("no run \(resume.uuidString.lowercased()) in \(selection.endpoint) (see orchestrate runs)")
                }
                runID = resume
                workingDirectory = summary.workingDirectory
                try await runs.setState(runID, .running)
                FileHandle.standardError.write(Data("resuming run \(runID.uuidString.lowercased()): \(summary.pending) scenario(s) left\n".utf8))
                guard let left = try await runs.unsettled(runID) else {
                    throw StoreError(.unknownRun, "run \(runID.uuidString.lowercased()) vanished from \(selection.endpoint)")
                }
                (startedAt, unsettled) = left
            } else {
                let scenarios = try select(config.scenarios(), only: options.only, tags: options.tags, config: config)
                let plan = RunPlan(
                    host: HostFacts.hostName, gitRevision: await gitRevision?.value,
                    workingDirectory: config.directory, configPath: options.configPath, mode: mode, workers: workers,
                    retries: options.retries ?? config.retries, scenarios: scenarios
                )
                (startedAt, unsettled) = try await runs.create(plan)
                queue.remember(plan)
                runID = plan.id
                workingDirectory = config.directory
            }
            var configuration = CoordinatorConfiguration(
                runID: runID, workers: workers, host: HostFacts.hostName, workingDirectory: workingDirectory,
                attemptsDirectory: "\(config.directory)/.orchestrate/runs", mode: mode,
                baseEnvironment: ProcessInfo.processInfo.environment,
                frozenNow: ISO8601DateFormatter().string(from: startedAt)
            )
            configuration.lease = lease
            let reporter = ProgressReporter(style: style(options.progress), expected: unsettled, workers: workers)
            let networkLog = NetworkLogWriter.forProject(config.directory, database: database, logger: logger)
            networkLog.start()
            let fleet = MockFleet(
                configuration: config.mock.server, mode: mode,
                recordings: resolve(config.mock.recordings, against: config.directory), frozenNow: configuration.frozenNow,
                log: networkLog, logger: logger
            )
            let coordinator = Coordinator(configuration: configuration, queue: queue, logger: logger, hooks: fleet) { reporter.handle($0) }
            let outcome: CoordinatorOutcome
            do {
                outcome = try await runUntilDoneOrSignalled(coordinator, reporter: reporter, logger: logger)
            } catch {
                await networkLog.close()
                throw error
            }
            await networkLog.close()
            reporter.finish()

            async let history = outcome == .interrupted ? [:] : runs.laneHistory(of: runID)
            try await runs.setState(runID, outcome == .interrupted ? .interrupted : .finished)
            var final = try await runs.report(runID)
            let recordings = resolve(config.mock.recordings, against: config.directory)
            var verdicts: [StoredVerdict] = []
            var unsteady = Set<String>()
            if outcome != .interrupted {
                let judgement = try await RunJudge(runs: runs, cassette: { MockFleet.cassette(for: $0, recordings: recordings) }).judge(final, history: try await history)
                (verdicts, unsteady) = (judgement.verdicts, judgement.unsteady)
                let byScenario = Dictionary(uniqueKeysWithValues: verdicts.map { ($0.scenarioID, $0) })
                // Only verdicts that differ from what is stored are written (a single lane's pass got its verdict as it
                // settled).
                var unchanged = Set<String>()
                for index in final.scenarios.indices {
                    guard let judged = byScenario[final.scenarios[index].scenario.id] else { continue }
                    let stored = final.scenarios[index]
                    if stored.verdict == judged.verdict, stored.verdictReason == judged.reason, stored.evidence.isEmpty, judged.evidence.isEmpty {
                        unchanged.insert(judged.scenarioID)
                    }
                    final.scenarios[index].verdict = judged.verdict
                    final.scenarios[index].verdictReason = judged.reason
                    final.scenarios[index].evidence = judged.evidence
                }
                verdicts.removeAll { unchanged.contains($0.scenarioID) }
            }
            // The verdicts are stored, and quarantine changes (they apply from the next run on: this one keeps the
            // quarantine it started with) worked out, while the reports are written.
            async let saved: Void = verdicts.isEmpty ? () : runs.saveVerdicts(runID, verdicts)
            let scenarioIDs = final.scenarios.map(\.scenario.id)
            async let quarantined: Void = outcome == .interrupted ? () : quarantine(scenarioIDs, unsteady: unsteady, config.quarantine, runs: runs)
            let reportsDirectory = resolve(options.reportsDirectory ?? config.reports, against: config.directory)
            let files = try await RunReportFiles(runs: runs, directory: "\(reportsDirectory)/\(runID.uuidString.lowercased())").write(
                final, extraJUnit: options.junitPath.map { resolve($0, against: FileManager.default.currentDirectoryPath) }
            )
            try await saved
            try await quarantined
            print(RunSummaryText.render(final, attemptsDirectory: configuration.attemptsDirectory, files: files))
            if outcome == .interrupted { return 130 }
            return final.scenarios.contains { $0.failsRun(strict: options.strict) } ? 1 : 0
        }
    }

    /// Automatic quarantine: the run's scenarios whose flakiness score over the window reached the threshold go in,
    /// automatic entries below it come out (said on stderr). It applies from the next run on.
    ///
    /// Only scenarios that can have crossed the threshold are scored: those with a failure in this run or their recent
    /// history (`unsteady`; without a failure a score only falls, to at most the prior's 0.1) and automatic entries,
    /// which may have to come out. A suite that keeps passing costs no scoring at all.
    private static func quarantine(
        _ scenarioIDs: [String], unsteady: Set<String>, _ settings: OrchestrateConfig.Quarantine, runs: RunStore
    ) async throws {
        guard let threshold = settings.threshold else { return }
        var candidates = scenarioIDs
        if threshold > FlakinessScore.withoutFlips {
            let automatic = Set(try await runs.quarantined().filter(\.automatic).map(\.scenarioId))
            candidates = scenarioIDs.filter { unsteady.contains($0) || automatic.contains($0) }
        }
        guard !candidates.isEmpty else { return }
        let since = Date().addingTimeInterval(-Double(settings.window.wholeMilliseconds) / 1000)
        let lines = try await runs.flakiness(
            since: since, scenarioIDs: candidates, limit: candidates.count, scoresOnly: true
        )
        let (added, released) = try await runs.updateAutomaticQuarantine(scores: lines.map { ($0.scenarioId, $0.score) }, threshold: threshold)
        for id in added { FileHandle.standardError.write(Data("quarantined \(id): flakiness score reached \(threshold) (orchestrate flaky)\n".utf8)) }
        for id in released { FileHandle.standardError.write(Data("released \(id) from quarantine: flakiness score below \(threshold)\n".utf8)) }
    }

    /// Runs the coordinator as a service: SIGINT/SIGTERM stop launching and end the running attempts.
    private static func runUntilDoneOrSignalled(_ coordinator: Coordinator, reporter: ProgressReporter, logger: Logger) async throws -> CoordinatorOutcome {
        let service = CoordinatorService(coordinator: coordinator, reporter: reporter)
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: service, successTerminationBehavior: .gracefullyShutdownGroup,
                             failureTerminationBehavior: .gracefullyShutdownGroup)],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        ))
        try await group.run()
        guard let outcome = service.outcome.withLock({ $0 }) else { return .interrupted }
        return try outcome.get()
    }

    static func loadConfig(_ path: String, required: Bool) throws -> OrchestrateConfig {
        if !required && !FileManager.default.fileExists(atPath: path) {
            return OrchestrateConfig(directory: FileManager.default.currentDirectoryPath, path: path)
        }
        return try ConfigLoader.load(path: path)
    }

    /// The scenarios `--only` (ids) and `--tags` (a tag expression) select, in the config's order.
    static func select(_ scenarios: [Scenario], only: [String], tags: String?, config: OrchestrateConfig) throws -> [Scenario] {
        guard !scenarios.isEmpty else { throw ConfigError(file: config.path, "no scenarios: add some under suite.scenarios") }
        var selected = scenarios
        if !only.isEmpty {
            var wanted = Set<String>()
            for selector in only {
                let place = FeaturePlace(selector)
                let matching = scenarios.filter { $0.id == selector || place.holds($0) }
                if matching.isEmpty {
                    throw UsageError("--only \(selector): no such scenario id or feature FILE[:LINE] in \(config.path) (see orchestrate scenarios)")
                }
                wanted.formUnion(matching.map(\.id))
            }
            selected = selected.filter { wanted.contains($0.id) }
        }
        if let tags {
            let expression: TagExpression
            do {
                expression = try TagExpression(tags)
            } catch {
                throw UsageError("--tags: \(error)")
            }
            // Tags are written with their @ in expressions, as in feature files.
            selected = selected.filter { scenario in expression.matches(scenario.tags.map { "@\($0)" }) }
            guard !selected.isEmpty else {
                throw UsageError("--tags \(tags): no scenario in \(config.path) has matching tags (see orchestrate scenarios)")
            }
        }
        return selected
    }

    static func resolve(_ path: String, against directory: String) -> String {
        path.hasPrefix("/") ? path : URL(fileURLWithPath: directory).appendingPathComponent(path).standardizedFileURL.path
    }

    private static func style(_ choice: RunOptions.ProgressChoice) -> ProgressReporter.Style {
        switch choice {
        case .automatic: return .automatic()
        case .live: return .live
        case .lines: return .lines
        case .none: return .silent
        }
    }
}

/// The coordinator as a swift-service-lifecycle service, with a ticker for the live display.
private final class CoordinatorService: Service, Sendable {
    let coordinator: Coordinator
    let reporter: ProgressReporter
    let outcome = Mutex<Result<CoordinatorOutcome, any Error>?>(nil)

    init(coordinator: Coordinator, reporter: ProgressReporter) {
        self.coordinator = coordinator
        self.reporter = reporter
    }

    func run() async throws {
        let result: Result<CoordinatorOutcome, any Error>
        do {
            let value = try await withGracefulShutdownHandler {
                try await withThrowingTaskGroup(of: CoordinatorOutcome?.self) { group in
                    group.addTask {
                        while !Task.isCancelled {
                            try? await Task.sleep(for: .milliseconds(250))
                            self.reporter.tick()
                        }
                        return nil
                    }
                    group.addTask { try await self.coordinator.run() }
                    while let next = try await group.next() {
                        if let next {
                            group.cancelAll()
                            return next
                        }
                    }
                    return .interrupted
                }
            } onGracefulShutdown: {
                self.coordinator.requestStop()
            }
            result = .success(value)
        } catch {
            result = .failure(error)
        }
        outcome.withLock { $0 = result }
    }
}

/// A bad flag or argument: exit 2 with one line.
package struct UsageError: Error, CustomStringConvertible, Sendable {
    package let description: String
    package init(_ description: String) { self.description = description }
}

/// `--only` takes a scenario id, or as Cucumber does a feature file with optional lines (`a.feature:12:30`):
/// a line selects the scenario on it, an outline's line all its example rows, a row's line that row.
struct FeaturePlace {
    let path: String
    let lines: [Int]

    init(_ selector: String) {
        var parts = selector.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        var lines: [Int] = []
        while parts.count > 1, let line = Int(parts[parts.count - 1]) {
            lines.insert(line, at: 0)
            parts.removeLast()
        }
        self.path = URL(fileURLWithPath: parts.joined(separator: ":")).standardized.path
        self.lines = lines
    }

    func holds(_ scenario: Scenario) -> Bool {
        guard let uri = scenario.uri, uri.hasSuffix(".feature"), URL(fileURLWithPath: uri).standardized.path == path else { return false }
        return lines.isEmpty || lines.contains { $0 == scenario.line || $0 == scenario.definitionLine }
    }
}
