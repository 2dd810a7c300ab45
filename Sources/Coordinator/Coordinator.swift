import Foundation
import Logging
import OrchestrateModel
import ProcessSupervisor
import Reports
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs a run's attempts on this host: N worker slots, each holding a port, claiming attempts from
/// the queue until it is drained; a heartbeat keeps the leases alive, a reaper takes back the
/// attempts of dead workers (anywhere: expired leases; on this host: owners whose process is gone).
///
/// ```swift
/// let coordinator = Coordinator(configuration: configuration, queue: queue, logger: logger) { event in … }
/// let outcome = try await coordinator.run()   // .drained or .interrupted
/// ```
/// ``requestStop()`` (or cancelling the task) stops launching, ends the running process groups and
/// returns their attempts to the queue.
package final class Coordinator: Sendable {
    package let configuration: CoordinatorConfiguration
    private let queue: any AttemptQueueClient
    private let logger: Logger
    private let onEvent: @Sendable (CoordinatorEvent) -> Void
    private let hooks: (any AttemptHooks)?
    private let state: Mutex<State>

    private let patientQueue: PatientQueue

    private struct State {
        /// What each slot does, and what it holds.
        var slots: SlotStateMachine
        /// The process each slot runs now.
        var processes: [Int: SupervisedProcess] = [:]
    }

    /// How long a stopping run waits for a queue that does not answer to take back what it holds (what it cannot give
    /// back, a later coordinator on this host requeues at once: its owner is gone).
    package static let stoppingPatience = Duration.seconds(5)

    package init(
        configuration: CoordinatorConfiguration,
        queue: any AttemptQueueClient,
        logger: Logger,
        hooks: (any AttemptHooks)? = nil,
        onEvent: @escaping @Sendable (CoordinatorEvent) -> Void = { _ in }
    ) {
        self.configuration = configuration
        self.queue = queue
        self.logger = logger
        self.hooks = hooks
        self.onEvent = onEvent
        self.state = Mutex(State(slots: SlotStateMachine(workers: configuration.workers)))
        self.patientQueue = PatientQueue(queue, logger: logger)
    }

    /// Stops launching attempts and ends the running ones; ``run()`` then returns `.interrupted`.
    package func requestStop() {
        patientQueue.stop()
        let processes = state.withLock { state -> [SupervisedProcess] in
            state.slots.stop()
            return Array(state.processes.values)
        }
        for process in processes { process.terminate() }
    }

    private var isStopping: Bool { state.withLock { $0.slots.stopping } }

    /// Whether the queue does not answer now (an outage under way).
    package var queueUnreachable: Bool { patientQueue.unreachable }

    /// Works until the run's queue is drained or a stop is requested.
    package func run() async throws -> CoordinatorOutcome {
        var ports: [PortLease] = []
        for _ in 0..<configuration.workers { ports.append(try PortLease.acquire()) }
        try await reclaimDeadLocalLeases()
        return try await withTaskCancellationHandler {
            try await withThrowingTaskGroup(of: Void.self) { background in
                let batcher = RoundBatcher(
                    runID: configuration.runID, workers: configuration.workers,
                    process: WorkerIdentity(host: configuration.host, pid: getpid(), slot: 0), queue: patientQueue,
                    logger: logger,
                    slotLeases: { self.state.withLock { $0.slots.heldAttempts } }, onEvent: onEvent
                )
                background.addTask { await self.maintainLeases(batcher) }
                do {
                    try await withThrowingTaskGroup(of: Void.self) { slots in
                        for (index, port) in ports.enumerated() {
                            let slot = index + 1
                            onEvent(.slotReady(slot: slot, port: port.port))
                            slots.addTask { try await self.runSlot(slot, port: port, batcher: batcher) }
                        }
                        try await slots.waitForAll()
                    }
                } catch {
                    await slotsDidStop()
                    await keepUnrecorded(batcher)
                    throw error
                }
                // Every result on record, and what was claimed ahead back in the queue.
                await slotsDidStop()
                do {
                    try await batcher.flush()
                } catch {
                    await keepUnrecorded(batcher)
                    throw error
                }
                for claimed in batcher.takeAhead() {
                    _ = try await retrying("release", { try await self.queue.release(claimed) })
                }
                background.cancelAll()
                withExtendedLifetime(ports) {}
                return isStopping ? .interrupted : .drained
            }
        } onCancel: {
            self.requestStop()
        }
    }

    /// Carries out what the slot's state machine decides, one action after another, until the slot's work ends.
    private func runSlot(_ slot: Int, port: PortLease, batcher: RoundBatcher) async throws {
        let claimant = Claimant(
            worker: WorkerIdentity(host: configuration.host, pid: getpid(), slot: slot), port: port.port)
        let runner = AttemptRunner(configuration: configuration)
        let folder =
            "\(configuration.attemptsDirectory)/\(configuration.runID.uuidString.lowercased())/.slots/\(getpid())/\(slot)"
        var resources = try SlotResources(number: slot, portLease: port, supervisor: try Supervisor(), folder: folder)
        (resources.environment, resources.fixedKeys) = runner.slotEnvironment(resources)
        defer { resources.supervisor.shutdown() }
        var actions = decide { $0.start(slot) }[...]
        while let action = actions.popFirst() {
            let next: [SlotStateMachine.Action]
            switch action {
            case .askForWork:
                if isStopping {
                    next = decide { $0.readyToAsk(slot) }
                    break
                }
                let answer = try await batcher.next(for: claimant)
                next = decide {
                    $0.answered(slot, claimed: answer.claimed, counts: answer.counts, recorded: answer.recorded)
                }
            case .countWhatIsLeft:
                let counts = try await retrying(
                    "count", { try await self.queue.counts(runID: self.configuration.runID) })
                next = decide { $0.counted(slot, counts) }
            case .waitForResults(let since):
                await batcher.waitForResults(since: since, atMost: configuration.pollInterval)
                next = decide { $0.waited(slot) }
            case .announce(let attempts):
                for attempt in attempts { onEvent(.attemptStarted(slot: slot, attempt: attempt)) }
                next = []
            case .claimBatch(let claimed, let limit, let budget):
                let companions = try await retrying("claim a batch") {
                    try await self.queue.claimCompanions(
                        of: claimed, limit: limit, slots: self.configuration.workers, budgetMilliseconds: budget)
                }
                next = decide { $0.batchClaimed(slot, companions) }
            case .run(let attempts):
                let ending = await run(attempts, slot: slot, port: port, resources: resources, runner: runner)
                next = decide { state in
                    state.processes[slot] = nil
                    return state.slots.ended(slot, ending)
                }
            case .terminate:
                state.withLock { $0.processes[slot] }?.terminate()
                next = []
            case .ready(let finished):
                let results = await ready(finished, slot: slot)
                next = decide { $0.readied(slot, results) }
            case .record(let completions):
                batcher.finish(completions.map { ($0.attempt, $0.result) })
                next = []
            case .release(let attempts):
                for attempt in attempts { try await release(attempt, slot: slot) }
                next = []
            case .requeueAlone(let attempts):
                for attempt in attempts {
                    _ = try await retrying(
                        "requeue",
                        { try await self.queue.requeue(attemptID: attempt.id, token: attempt.leaseToken, solo: true) })
                    onEvent(.attemptReleased(slot: slot, attempt: attempt))
                }
                next = []
            case .lost(let lost, let requeued):
                logger.warning(
                    "a worker slot's supervisor died",
                    metadata: [
                        "worker.slot": "\(slot)", "scenario.id": "\(lost.attempt.scenario.id)",
                        "attempt.losses": "\(lost.losses)",
                    ])
                onEvent(.attemptLost(slot: slot, attempt: lost.attempt, requeued: requeued))
                if requeued { _ = try await retrying("release", { try await self.queue.release(lost.attempt) }) }
                next = []
            case .forgetSession(let claimed):
                await hooks?.attemptWasLost(claimed, slot: slot)
                next = []
            case .replaceSupervisor:
                resources.supervisor.shutdown()
                let supervisor = await newSupervisor()
                if let supervisor { resources.supervisor = supervisor }
                next = decide { $0.supervisorReplaced(slot, started: supervisor != nil) }
            case .retire(let reason):
                onEvent(.slotRetired(slot: slot, reason: reason))
                next = []
            case .fail(let reason):
                throw CoordinatorError(.noSlots, reason)
            case .end:
                return
            }
            actions.insert(contentsOf: next, at: actions.startIndex)
        }
        // Every path of the machine ends a slot with `.end` or `.fail`: running out of steps is a bug, never a drained run.
        let slotState = state.withLock { $0.slots.slots[slot] }
        throw CoordinatorError(
            .slotStuck, "worker slot \(slot) was left without a next step (\(String(describing: slotState)))")
    }

    /// Hands an event to the slots' state machine; returns what to do.
    private func decide(_ event: (inout SlotStateMachine) -> [SlotStateMachine.Action]) -> [SlotStateMachine.Action] {
        state.withLock { event(&$0.slots) }
    }

    private func decide(_ event: (inout State) -> [SlotStateMachine.Action]) -> [SlotStateMachine.Action] {
        state.withLock { event(&$0) }
    }

    /// Runs `attempts` in the slot's process, the slot's mock session prepared first; what goes wrong around the
    /// command is an infrastructure error of each.
    private func run(
        _ attempts: [ClaimedAttempt], slot: Int, port: PortLease, resources: SlotResources, runner: AttemptRunner
    ) async -> AttemptRunner.Ending {
        do {
            let session = try await hooks?.attemptWillStart(attempts[0], slot: slot, port: port) ?? [:]
            return await runner.run(attempts, slot: resources, session: session) { process in
                let actions = decide { state in
                    state.processes[slot] = process
                    return state.slots.processStarted(slot)
                }
                if actions.contains(.terminate) { process.terminate() }
            }
        } catch {
            let result = AttemptResult(outcome: .infrastructureError, durationMilliseconds: 0, error: "\(error)")
            return AttemptRunner.Ending(dispositions: attempts.map { _ in .finished(result, reported: nil) })
        }
    }

    /// Finished attempts' results as they are recorded: the attempt's own end said to the hooks (its mock session's),
    /// secrets scrubbed from its output (off the cooperative pool), what its runner reported and what it kept handed
    /// on.
    private func ready(_ finished: [SlotStateMachine.Finished], slot: Int) async -> [SlotStateMachine.Completion] {
        var secrets = configuration.secretEnvironment.secrets
        if let met = hooks?.secretsMet(bySlot: slot) { secrets.formUnion(met) }
        var results: [SlotStateMachine.Completion] = []
        var finished = finished
        // The slot's mock session is its claimed attempt's; in a batch it saw every test's exchanges, which cannot be
        // told apart: an upstream's failure it saw stands for each failed test of the process.
        var sessionEvidence: String?
        for index in finished.indices where finished[index].ownsSession {
            await hooks?.attemptDidEnd(finished[index].attempt, slot: slot, result: &finished[index].result)
            sessionEvidence = finished[index].result.evidence
        }
        for var item in finished {
            if item.result.outcome == .passed {
                item.result.evidence = nil
            } else {
                // Its own end first (a crash, a timeout), else what its mock session saw (an upstream's failure).
                item.result.evidence = RetryEvidence.outcome(item.result) ?? item.result.evidence ?? sessionEvidence
                if configuration.retryWhen == .evidence, item.result.evidence == nil { item.result.reproduces = true }
            }
            if !secrets.isEmpty {
                item.result = await blockingOffPool { [result = item.result, secrets] in
                    var scrubbed = result
                    AttemptRunner.scrub(&scrubbed, secrets: secrets)
                    return scrubbed
                }
            }
            if var reported = item.reported {
                reported.message = reported.message.map { secrets.scrubbed($0) }
                await hooks?.testWasReported(item.attempt, reported, result: item.result)
            }
            if item.result.folder != nil { await hooks?.attemptWasKept(item.attempt, result: item.result) }
            results.append(SlotStateMachine.Completion(item.attempt, item.result))
        }
        return results
    }

    /// Results the queue never recorded, handed to the hooks to keep for the run taken up again.
    private func keepUnrecorded(_ batcher: RoundBatcher) async {
        let unrecorded = batcher.unrecorded
        if !unrecorded.isEmpty { await hooks?.resultsWereNotRecorded(unrecorded) }
    }

    /// The slots' clean-up (mock servers, simulators), carried out in full even when the run is cancelled (a stop cut
    /// short): a simulator left behind outlives the run.
    private func slotsDidStop() async {
        guard let hooks else { return }
        await Task { await hooks.slotsDidStop() }.value
    }

    /// A new supervisor for a slot whose supervisor died; `nil` when none starts (after a few tries).
    private func newSupervisor() async -> Supervisor? {
        for delay in [0, 100, 500] {
            if delay > 0 { try? await Task.sleep(for: .milliseconds(delay)) }
            if let supervisor = try? Supervisor() { return supervisor }
        }
        return nil
    }

    private func release(_ claimed: ClaimedAttempt, slot: Int) async throws {
        _ = try await retrying("release", { try await self.queue.release(claimed) })
        onEvent(.attemptReleased(slot: slot, attempt: claimed))
    }

    /// Heartbeats for this host's leases, and the reaper for everybody's. A lease the heartbeat no longer holds was
    /// taken back while this host could not renew it (it was cut off, or stalled): the attempt runs elsewhere now, so
    /// its process group here is ended (its late result is fenced out by the queue).
    private func maintainLeases(_ batcher: RoundBatcher) async {
        let heartbeatEvery = configuration.lease / 3
        var sinceReap = Duration.zero
        while !Task.isCancelled {
            do { try await Task.sleep(for: heartbeatEvery) } catch { return }
            let held = state.withLock { $0.slots.heldAttempts } + batcher.heldAttempts
            do {
                // A heartbeat that does not answer within its period (a partition) is tried again at the next one.
                let renewed = try await abandoning(after: heartbeatEvery) {
                    try await self.queue.heartbeat(held)
                }
                for attempt in held where !renewed.contains(attempt.leaseToken) {
                    stopOrphan(token: attempt.leaseToken)
                }
                sinceReap += heartbeatEvery
                if sinceReap >= configuration.lease / 2 {
                    sinceReap = .zero
                    let reclaimed = try await abandoning(after: heartbeatEvery) {
                        try await self.queue.reapExpired(runID: self.configuration.runID)
                    }
                    if reclaimed > 0 { onEvent(.leasesReclaimed(count: reclaimed)) }
                }
            } catch is CancellationError {
                return
            } catch {
                logger.warning("lease maintenance failed; retrying", metadata: ["error": "\(queue.describe(error))"])
            }
        }
    }

    /// Ends the attempt a slot runs under a lease that was taken back, if a slot still runs it under that lease.
    private func stopOrphan(token: UUID) {
        let running = state.withLock { state in
            state.slots.slot(runningUnder: token).flatMap { slot in state.processes[slot].map { (slot, $0) } }
        }
        guard let (slot, process) = running else { return }
        logger.warning(
            "an attempt's lease was taken back while this host could not renew it; ending it (it runs elsewhere now)",
            metadata: ["worker.slot": "\(slot)"])
        onEvent(.leaseLost(slot: slot))
        process.terminate()
    }

    /// Attempts leased by processes of this host that no longer exist go back to the queue at once,
    /// without waiting for their leases to expire (a resumed run after a SIGKILL, say).
    private func reclaimDeadLocalLeases() async throws {
        let holders = try await retrying(
            "lease holders", { try await self.queue.leaseHolders(runID: self.configuration.runID) })
        var reclaimed = 0
        for holder in holders {
            guard let owner = ProcessIdentity(holder.owner), owner.host == configuration.host, owner.pid != getpid()
            else { continue }
            guard kill(owner.pid, 0) != 0, errno == ESRCH else { continue }
            if try await retrying(
                "requeue",
                { try await self.queue.requeue(attemptID: holder.attemptID, token: holder.token, solo: false) })
            {
                reclaimed += 1
            }
        }
        if reclaimed > 0 {
            logger.info("requeued attempts of dead workers", metadata: ["attempts.count": "\(reclaimed)"])
            onEvent(.leasesReclaimed(count: reclaimed))
        }
    }

    /// A queue operation, tried again while the database is unavailable (``PatientQueue``).
    private func retrying<T: Sendable>(
        _ what: String, _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await patientQueue.call(what) { _ in try await operation() }
    }
}
