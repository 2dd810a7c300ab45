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
    let settings: RunSettings
    let planned: RunPlanner.Planned
    let database: Database
    let output: any RunOutput
    let logger: Logger
    /// Other hosts may work the run too: their part is shown with the progress.
    var showsHosts = false
    /// Told what the slots do and, every second, what is left of the run.
    var metrics: RunMetrics?
    /// Where results are kept that the queue never recorded (it stopped answering), for the run taken up again.
    var pending: PendingResults?
    /// Why this host's slots were stopped for failing fast (`run --fail-fast`), once they were: a stop that is not a
    /// signal's.
    let failedFast = FailFastStop()

    /// Set by the fail-fast watcher before it stops the slots; read when they have.
    final class FailFastStop: Sendable {
        let reason = Mutex<String?>(nil)
    }

    /// Where attempts leave what is kept of them.
    var attemptsDirectory: String { "\(settings.directory)/.orchestrate/runs" }

    func execute() async throws -> CoordinatorOutcome {
        // Every host builds a Swift package's tests before its slots start (the host that planned the run did already).
        try await settings.buildTests()
        let lease = settings.lease.value
        // A compare run's lanes never join a batch, and run on different slots.
        let workers =
            planned.plan.flatMap { plan in
                settings.mode.value == .compare
                    ? nil : BatchSizing.slotsWorthStarting(for: plan.scenarios, workers: settings.workers.value)
            } ?? settings.workers.value
        if workers < settings.workers.value {
            output.note(
                "\(workers) of \(settings.workers.value) slots work this run: its runner's start-up outweighs its tests "
                    + "(suite.batch: auto; --verbose says why)")
        }
        var queue = AttemptQueue(database: database, lease: lease)
        queue.passVerdict = VerdictRule.singleLanePass
        if let plan = planned.plan { queue.remember(plan) }
        // Results an earlier process of this host finished while the database was away are recorded, not run again.
        let replayed = try await PendingResults.replay(
            runID: planned.runID, projectDirectory: settings.directory, queue: queue)
        if replayed.recorded + replayed.refused > 0 {
            output.note(
                "recorded \(replayed.recorded) result(s) an earlier orchestrate on this host finished while the database was away"
                    + (replayed.refused > 0 ? "; \(replayed.refused) had been taken back and run again" : ""))
        }
        var configuration = CoordinatorConfiguration(
            runID: planned.runID, workers: workers, host: HostFacts.hostName,
            workingDirectory: planned.workingDirectory,
            attemptsDirectory: attemptsDirectory, mode: settings.mode.value,
            baseEnvironment: ProcessInfo.processInfo.environment,
            frozenNow: planned.startedAt.formatted(.iso8601)
        )
        configuration.lease = lease
        configuration.secretEnvironment = settings.secretEnvironment(inherited: configuration.baseEnvironment)
        // A run's hosts go by how it was planned; a resumed run by this process's settings.
        configuration.retryWhen = planned.retryWhen ?? settings.retryWhen.value
        var server = settings.mockServer
        server.secrets = configuration.secretEnvironment.secrets
        output.started(expected: planned.expected, workers: workers)
        let networkLog = NetworkLogWriter.forProject(settings.directory, database: database, logger: logger)
        networkLog.start()
        // Around each attempt: its mock session, its runner's report as its step, its kept files stored, the suite's
        // own per-slot resources (a simulator); results the queue never recorded, kept for the run taken up again.
        var hooks: [any AttemptHooks] = [
            MockSessions(
                configuration: server, mode: settings.mode.value, recordings: settings.recordings,
                frozenNow: configuration.frozenNow,
                log: networkLog, logger: logger),
            RunnerSteps(log: networkLog),
            StoredFiles(files: AttemptFiles(database: database, maximumBytes: settings.artifactBytes), logger: logger),
            TestCoverage(
                runs: RunStore(database: database), runID: planned.runID, directory: planned.workingDirectory,
                logger: logger),
        ]
        hooks += settings.attemptHooks(runID: planned.runID)
        if let pending { hooks.append(pending) }
        metrics?.started(workers: workers)
        let coordinator = Coordinator(
            configuration: configuration, queue: queue, logger: logger, hooks: AttemptHookChain(hooks)
        ) { [output, metrics] in
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
        let failFast = Task { [runs = RunStore(database: database), runID = planned.runID, output, failedFast] in
            await Self.failFast(runID, runs: runs, output: output) { reason in
                failedFast.reason.withLock { $0 = reason }
                coordinator.requestStop()
            }
        }
        defer { failFast.cancel() }
        let outcome: CoordinatorOutcome
        do {
            outcome = try await runUntilDoneOrSignalled(coordinator)
        } catch {
            watch?.cancel()
            // A database that stopped answering for good gets one more second: the rest goes to the spool.
            let unreachable = (error as? CoordinatorError)?.code == .queueUnavailable
            let left = await networkLog.close(within: unreachable ? .seconds(1) : nil)
            if left > 0 { output.note("the network log's \(left) row(s) wait in .orchestrate/spool for the next run") }
            if networkLog.lost > 0 {
                output.note(
                    "\(networkLog.lost) row(s) of the network log are lost: neither the database nor the disk took them"
                )
            }
            throw error
        }
        watch?.cancel()
        // A stopped run's network log is written within the stop's patience (what is left waits in the spool for the
        // next run); a finished run's, as long as writes go on.
        await networkLog.close(
            within: coordinator.queueUnreachable
                ? .seconds(1) : outcome == .interrupted ? Coordinator.stoppingPatience * 2 : nil)
        output.finished()
        return outcome
    }

    /// `run --fail-fast N` on every host: every half second, the run's genuine failures against its limit; the first
    /// host to count N stops the run, and every host that sees it stopped calls `stop` with why (its running attempts
    /// end, it claims nothing more). A run that does not fail fast is asked once; a read that fails skips a beat.
    static func failFast(
        _ runID: UUID, runs: RunStore, output: any RunOutput, every interval: Duration = .milliseconds(500),
        stop: (String) -> Void
    ) async {
        while !Task.isCancelled {
            if let state = try? await runs.failFast(runID) {
                guard let limit = state.limit else { return }
                var stopped = state.stopped
                if stopped == nil, state.failures >= limit {
                    let reason = "\(state.failures) test\(state.failures == 1 ? "" : "s") failed (--fail-fast \(limit))"
                    stopped = try? await runs.stop(runID, because: reason)
                }
                if let stopped {
                    output.note("stopping the run on every host: \(stopped)")
                    stop(stopped)
                    return
                }
            }
            try? await Task.sleep(for: interval)
        }
    }

    /// Runs the coordinator as a service: SIGINT/SIGTERM stop launching and end the running attempts. A stop that has
    /// not ended when the attempts' grace and giving them back to the queue should have (a queue that does not answer)
    /// is cut short: the coordinator is cancelled, and the run is interrupted all the same.
    private func runUntilDoneOrSignalled(_ coordinator: Coordinator) async throws -> CoordinatorOutcome {
        let service = CoordinatorService(coordinator: coordinator, output: output)
        var configuration = ServiceGroupConfiguration(
            services: [
                .init(
                    service: service, successTerminationBehavior: .gracefullyShutdownGroup,
                    failureTerminationBehavior: .gracefullyShutdownGroup)
            ],
            gracefulShutdownSignals: settings.trapsSignals ? [.sigterm, .sigint] : [],
            logger: logger
        )
        configuration.maximumGracefulShutdownDuration =
            coordinator.configuration.grace + Coordinator.stoppingPatience + .seconds(15)
        let group = ServiceGroup(configuration: configuration)
        StopGuard.executing(true)
        defer { StopGuard.executing(false) }
        try await group.run()
        guard let outcome = service.outcome.withLock({ $0 }) else { return .interrupted }
        if case .failure(let error) = outcome, service.stopping.withLock({ $0 }) {
            // Stopped by a signal: what went wrong on the way out (a queue that does not answer, the stop cut short)
            // does not make it another kind of end. What was not given back, the next orchestrate on this host takes
            // back at once.
            if !(error is CancellationError) {
                logger.warning(
                    "the run stopped without giving all its attempts back",
                    metadata: ["error": "\(ExitStatus.describe(error))"])
            }
            return .interrupted
        }
        return try outcome.get()
    }
}

/// The coordinator as a swift-service-lifecycle service, with a ticker for the live display.
private final class CoordinatorService: Service, Sendable {
    let coordinator: Coordinator
    let output: any RunOutput
    let outcome = Mutex<Result<CoordinatorOutcome, any Error>?>(nil)
    /// A stop was asked for (a signal).
    let stopping = Mutex(false)

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
                self.stopping.withLock { $0 = true }
                self.coordinator.requestStop()
            }
            result = .success(value)
        } catch {
            result = .failure(error)
        }
        outcome.withLock { $0 = result }
    }
}
