import Analysis
import Coordinator
import Foundation
import Logging
import OrchestrateModel
import Store

/// `orchestrate run` and `orchestrate agent`, in four phases: plan the run in the database (or resume or join one —
/// ``RunWork``), execute it on this host's slots, judge it (exactly one process of a run does), report it. Returns the
/// exit code (docs/ARCHITECTURE.md: 0 passed, 1 a scenario failed, 130 interrupted); throws ``ConfigError``/``UsageError``
/// (exit 2) and store or coordinator failures (exit 3).
package enum RunOrchestration {
    package static func run(_ options: RunOptions, output: any RunOutput, logger: Logger) async throws -> Int32 {
        let config = try ConfigLoader.load(path: options.configPath, required: options.resume == nil && !options.agent)
        // Asking git (two processes in a repository) overlaps with reading the scenarios and reaching the database.
        let git = options.resume == nil && !options.agent ? Task { await HostFacts.git(in: config.directory) } : nil
        let workers = options.workers ?? config.workers
        let reports =
            options.reportsDirectory.map { (config.resolve($0), "--reports \($0)") } ?? (
                config.resolve(config.reports), "reports: \(config.reports) in \(config.path)"
            )
        let extraJUnit = options.junitPath.map { OrchestrateConfig.resolve($0, against: FileManager.default.currentDirectoryPath) }
        try RunPreflight.check(workers: workers, reports: reports, junit: extraJUnit)
        let metrics = options.metricsPort.map { _ in RunMetrics() }
        var server: MetricsServer?
        if let port = options.metricsPort, let metrics {
            do {
                server = try await MetricsServer.start(metrics: metrics, host: options.metricsAddress, port: port)
            } catch {
                throw UsageError("--metrics-address \(options.metricsAddress) --metrics-port \(port): cannot listen there (\(error))")
            }
        }
        if let server {
            let host = ["0.0.0.0", "::"].contains(options.metricsAddress) ? HostFacts.hostName : options.metricsAddress
            output.note("metrics for Prometheus at http://\(host.contains(":") ? "[\(host)]" : host):\(server.port)/metrics")
        }
        do {
            let code = try await ProjectDatabase.open(flag: options.database, config: config, logger: logger) { database in
                let work = RunWork(
                    config: config, options: options, workers: workers, reports: reports.0, extraJUnit: extraJUnit, database: database,
                    output: output, logger: logger, metrics: metrics)
                if options.forever { return try await work.serveForever() }
                switch try await work.arrive(git: await git?.value ?? (nil, nil)) {
                case .settled(let code): return code
                case .work(let planned, let joined): return try await work.work(planned, joined: joined)
                }
            }
            await server?.stop()
            return code
        } catch {
            await server?.stop()
            throw error
        }
    }

    /// Automatic quarantine after a judged run (``QuarantinePolicy``): scores the candidates and applies what goes in and
    /// out, said as a note each. It applies from the next run on.
    static func updateQuarantine(
        after judgement: RunJudge.Judgement, _ settings: OrchestrateConfig.Quarantine, project: String, runs: RunStore, output: any RunOutput
    ) async throws {
        let policy = QuarantinePolicy(threshold: settings.threshold)
        guard let threshold = policy.threshold else { return }
        let automatic = policy.needsAutomaticEntries ? Set(try await runs.quarantined(project: project).filter(\.automatic).map(\.scenarioId)) : []
        let candidates = policy.candidates(ran: judgement.report.scenarios.map(\.scenario.id), unsteady: judgement.unsteady, automatic: automatic)
        guard !candidates.isEmpty else { return }
        let since = Date().addingTimeInterval(-Double(settings.window.wholeMilliseconds) / 1000)
        let scores = try await runs.flakiness(project: project, since: since, scenarioIDs: candidates, limit: candidates.count, scoresOnly: true)
        let changes = policy.changes(scores: scores.map { ($0.scenarioId, $0.score) })
        let (added, released) = try await runs.applyAutomaticQuarantine(
            project: project, add: changes.add.map { ($0.scenarioID, $0.score, $0.reason) }, release: changes.release
        )
        for id in added { output.note("quarantined \(id): flakiness score reached \(threshold) (orchestrate flaky)") }
        for id in released { output.note("released \(id) from quarantine: flakiness score below \(threshold)") }
    }
}
