import Analysis
import Coordinator
import Foundation
import Logging
import MockServer
import OrchestrateModel
import ServiceLifecycle
import Store
import Synchronization
import UnixSignals

/// The second phase of a run: its attempts worked on this host's slots, each with its mock server, until the queue is
/// drained or a signal (SIGINT, SIGTERM) stops it. Exchanges and steps go to the database on the way.
struct RunExecution {
    let config: OrchestrateConfig
    let planned: RunPlanner.Planned
    let workers: Int
    let mode: Mode
    let lease: Duration
    let database: Database
    let output: any RunOutput
    let logger: Logger
    /// Other hosts may work the run too: their part is shown with the progress.
    var showsHosts = false
    /// Told what the slots do and, every second, what is left of the run.
    var metrics: RunMetrics?

    /// Where attempts leave what is kept of them.
    var attemptsDirectory: String { "\(config.directory)/.orchestrate/runs" }

    func execute() async throws -> CoordinatorOutcome {
        // Every host builds a Swift package's tests before its slots start (the host that planned the run did already).
        if let swiftpm = config.suite.swiftpm { try await SwiftPMSuite.build(swiftpm, config: config) }
        if let xcode = config.suite.xcodebuild { try await XcodeSuite.build(xcode, config: config) }
        var queue = AttemptQueue(database: database, lease: lease)
        queue.passVerdict = VerdictRule.singleLanePass
        if let plan = planned.plan { queue.remember(plan) }
        var configuration = CoordinatorConfiguration(
            runID: planned.runID, workers: workers, host: HostFacts.hostName, workingDirectory: planned.workingDirectory,
            attemptsDirectory: attemptsDirectory, mode: mode, baseEnvironment: ProcessInfo.processInfo.environment,
            frozenNow: ISO8601DateFormatter().string(from: planned.startedAt)
        )
        configuration.lease = lease
        configuration.secretEnvironment = config.secretEnvironment(inherited: configuration.baseEnvironment)
        var server = config.mock.server
        server.secrets = configuration.secretEnvironment.secrets
        output.started(expected: planned.expected, workers: workers)
        let networkLog = NetworkLogWriter.forProject(config.directory, database: database, logger: logger)
        networkLog.start()
        let fleet = MockFleet(
            configuration: server, mode: mode, recordings: config.resolve(config.mock.recordings),
            frozenNow: configuration.frozenNow, log: networkLog, logger: logger,
            files: AttemptFiles(database: database, maximumBytes: config.artifactBytes),
            simulators: config.suite.xcodebuild.map { SimulatorPool($0, config: config, runID: planned.runID) }
        )
        metrics?.started(workers: workers)
        let coordinator = Coordinator(configuration: configuration, queue: queue, logger: logger, hooks: fleet) { [output, metrics] in
            output.handle($0)
            metrics?.handle($0)
        }
        let watch =
            showsHosts || metrics != nil
            ? Task { [runs = RunStore(database: database), runID = planned.runID, output, metrics, showsHosts] in
                // Every host's part for the progress display and what is left for the metrics, every second; a failed
                // read just skips a beat.
                while !Task.isCancelled {
                    if showsHosts, let shares = try? await runs.hostShares(runID) { output.hosts(shares) }
                    if let metrics, let counts = try? await queue.counts(runID: runID) { metrics.queue(counts) }
                    try? await Task.sleep(for: .seconds(1))
                }
            } : nil
        let outcome: CoordinatorOutcome
        do {
            outcome = try await runUntilDoneOrSignalled(coordinator)
        } catch {
            watch?.cancel()
            await networkLog.close()
            throw error
        }
        watch?.cancel()
        await networkLog.close()
        output.finished()
        return outcome
    }

    /// Runs the coordinator as a service: SIGINT/SIGTERM stop launching and end the running attempts.
    private func runUntilDoneOrSignalled(_ coordinator: Coordinator) async throws -> CoordinatorOutcome {
        let service = CoordinatorService(coordinator: coordinator, output: output)
        let group = ServiceGroup(
            configuration: .init(
                services: [
                    .init(
                        service: service, successTerminationBehavior: .gracefullyShutdownGroup,
                        failureTerminationBehavior: .gracefullyShutdownGroup)
                ],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger
            ))
        try await group.run()
        guard let outcome = service.outcome.withLock({ $0 }) else { return .interrupted }
        return try outcome.get()
    }
}

/// The coordinator as a swift-service-lifecycle service, with a ticker for the live display.
private final class CoordinatorService: Service, Sendable {
    let coordinator: Coordinator
    let output: any RunOutput
    let outcome = Mutex<Result<CoordinatorOutcome, any Error>?>(nil)

    init(coordinator: Coordinator, output: any RunOutput) {
        self.coordinator = coordinator
        self.output = output
    }

    func run() async throws {
        let result: Result<CoordinatorOutcome, any Error>
        do {
            let value = try await withGracefulShutdownHandler {
                try await withThrowingTaskGroup(of: CoordinatorOutcome?.self) { group in
                    group.addTask {
                        while !Task.isCancelled {
                            try? await Task.sleep(for: .milliseconds(250))
                            self.output.tick()
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
