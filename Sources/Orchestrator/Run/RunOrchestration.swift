import Analysis
import Coordinator
import Foundation
import Logging
import OrchestrateModel
import Store

/// `orchestrate run` and `orchestrate agent`, in four phases: plan the run in the database (or resume or join one —
/// ``RunWork``), execute it on this host's slots, judge it (exactly one process of a run does), report it. Returns the
/// exit code (docs/ARCHITECTURE.md: 0 passed, 1 a scenario failed, 130 interrupted); throws
/// ``ConfigError``/``UsageError`` (exit 2) and store or coordinator failures (exit 3).
package enum RunOrchestration {
    package static func run(_ options: RunOptions, output: any RunOutput, logger: Logger) async throws -> Int32 {
        try await run(try RunSettings.resolve(options), output: output, logger: logger)
    }

    package static func run(_ settings: RunSettings, output: any RunOutput, logger: Logger) async throws -> Int32 {
        settings.log(to: logger)
        if settings.annotations.value {
            // On GitHub Actions nothing the run prints (a runner's message, a test's output, a name) is taken for a
            // workflow command: GitHub's stop-commands, under a token no test can know, until the run's own annotations.
            output.summary("::stop-commands::\(settings.commandsToken)")
        }
        // Asking git (three processes in a repository) overlaps with reaching the database and listing the scenarios.
        let git = settings.role.plans ? Task { await HostFacts.git(in: settings.directory) } : nil
        try RunPreflight.check(settings)
        var server: MetricsServer?
        let metrics = settings.metrics.map { _ in RunMetrics() }
        if let (address, port) = settings.metrics, let metrics {
            let started: MetricsServer
            do {
                started = try await MetricsServer.start(metrics: metrics, host: address, port: port)
            } catch {
                throw UsageError(
                    .badValue, "--metrics-address \(address) --metrics-port \(port): cannot listen there (\(error))")
            }
            server = started
            let host = ["0.0.0.0", "::"].contains(address) ? HostFacts.hostName : address
            output.note(
                "metrics for Prometheus at http://\(host.contains(":") ? "[\(host)]" : host):\(started.port)/metrics")
        }
        do {
            let code = try await ProjectDatabase.open(settings.database, logger: logger) { database in
                let work = RunWork(
                    settings: settings, database: database, output: output, logger: logger, metrics: metrics)
                switch try await work.arrive(git: git) {
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
}
