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
    private let state = Mutex(State())

    private struct State {
        var stopping = false
        var processes: [Int: SupervisedProcess] = [:]
        var tokens: [Int: UUID] = [:]
        /// The leases of the tests that run in a slot's process beside its claimed one (a batch).
        var companions: [Int: [UUID]] = [:]
        /// How often each attempt (scenario, lane, number) lost its supervisor on this host.
        var losses: [String: Int] = [:]
        var retiredSlots = 0
        /// Since when the queue has not answered (`nil`: it answers), and why, as first said.
        var unreachableSince: ContinuousClock.Instant?
        var unreachableReason = ""
        var batcher: RoundBatcher?
    }

    /// How long a stopping run waits for a queue that does not answer to take back what it holds (what it cannot give
    /// back, a later coordinator on this host requeues at once: its owner is gone).
    package static let stoppingPatience = Duration.seconds(5)

    /// How often an attempt may lose its slot's supervisor before it is recorded as an infrastructure error instead of
    /// going back to the queue (a scenario that kills its own supervisor would otherwise run forever).
    package static let maximumLosses = 3

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
    }

    /// Stops launching attempts and ends the running ones; ``run()`` then returns `.interrupted`.
    package func requestStop() {
        let processes = state.withLock { state -> [SupervisedProcess] in
            state.stopping = true
            return Array(state.processes.values)
        }
        for process in processes { process.terminate() }
    }

    private var isStopping: Bool { state.withLock { $0.stopping } }

    /// Whether the queue does not answer now (an outage under way).
    package var queueUnreachable: Bool { state.withLock { $0.unreachableSince != nil } }

    /// Works until the run's queue is drained or a stop is requested.
    package func run() async throws -> CoordinatorOutcome {
        var ports: [PortLease] = []
        for _ in 0..<configuration.workers { ports.append(try PortLease.acquire()) }
        try await reclaimDeadLocalLeases()
        return try await withTaskCancellationHandler {
            try await withThrowingTaskGroup(of: Void.self) { background in
                let batcher = RoundBatcher(
                    runID: configuration.runID, workers: configuration.workers,
                    process: WorkerIdentity(host: configuration.host, pid: getpid(), slot: 0),
                    perform: { round in try await self.performRound(round) },
                    onAck: { claimed, result, ack in self.acknowledged(claimed, result, ack) }
                )
                state.withLock { $0.batcher = batcher }
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
                for claimed in batcher.takeAhead() { _ = try await retrying("release", { try await self.queue.release(claimed) }) }
                background.cancelAll()
                withExtendedLifetime(ports) {}
                return isStopping ? .interrupted : .drained
            }
        } onCancel: {
            self.requestStop()
        }
    }

    private func runSlot(_ slot: Int, port: PortLease, batcher: RoundBatcher) async throws {
        let claimant = Claimant(worker: WorkerIdentity(host: configuration.host, pid: getpid(), slot: slot), port: port.port)
        let runner = AttemptRunner(configuration: configuration)
        let folder = "\(configuration.attemptsDirectory)/\(configuration.runID.uuidString.lowercased())/.slots/\(slot)"
        var resources = try SlotResources(number: slot, portLease: port, supervisor: try Supervisor(), folder: folder)
        (resources.environment, resources.fixedKeys) = runner.slotEnvironment(resources)
        defer { resources.supervisor.shutdown() }
        while !isStopping {
            let answer = try await batcher.next(for: claimant)
            guard let claimed = answer.claimed else {
                var counts = answer.counts
                if counts == nil { counts = try await retrying("count", { try await self.queue.counts(runID: self.configuration.runID) }) }
                if counts?.isDrained == true { return }
                await batcher.waitForResults(since: answer.recorded, atMost: configuration.pollInterval)
                continue
            }
            if isStopping {
                try await release(claimed, slot: slot)
                return
            }
            state.withLock { $0.tokens[slot] = claimed.leaseToken }
            onEvent(.attemptStarted(slot: slot, attempt: claimed))
            if claimed.lostHosts.count >= Self.maximumLosses {
                // A scenario whose hosts keep vanishing while it runs is not run again: it may be what takes them down.
                state.withLock { $0.tokens[slot] = nil }
                let hosts = claimed.lostHosts.joined(separator: ", ")
                batcher.finish(
                    claimed,
                    result: AttemptResult(
                        outcome: .infrastructureError, durationMilliseconds: 0,
                        error: "its host vanished \(claimed.lostHosts.count) times while it ran (\(hosts)): not run again"))
                continue
            }
            // A test of a batched suite takes others with it into its process.
            var attempts = [claimed]
            if let batch = claimed.scenario.batch, batch.size > 1, claimed.attempt == 1, claimed.lane == nil {
                attempts += try await retrying("claim a batch") {
                    try await self.queue.claimCompanions(
                        of: claimed, limit: batch.size - 1, slots: self.configuration.workers,
                        budgetMilliseconds: batch.milliseconds - (claimed.expectedMilliseconds ?? 0))
                }
                for companion in attempts.dropFirst() { onEvent(.attemptStarted(slot: slot, attempt: companion)) }
                state.withLock { $0.companions[slot] = attempts.dropFirst().map(\.leaseToken) }
            }
            let ending: AttemptRunner.Ending
            do {
                let session = try await hooks?.attemptWillStart(claimed, slot: slot, port: port) ?? [:]
                ending = await runner.run(attempts, slot: resources, session: session) { process in
                    let stopNow = state.withLock { state -> Bool in
                        state.processes[slot] = process
                        return state.stopping
                    }
                    if stopNow { process.terminate() }
                }
            } catch {
                let result = AttemptResult(outcome: .infrastructureError, durationMilliseconds: 0, error: "\(error)")
                ending = AttemptRunner.Ending(dispositions: attempts.map { _ in .finished(result, reported: nil) })
            }
            let (dispositions, reason) = (ending.dispositions, ending.reason)
            if let unusable = ending.slotUnusable {
                // What an earlier attempt left in the slot cannot be removed: its attempts did not run, go back to the queue
                // without a retry spent, and the slot is retired, so that nothing else is blamed for it.
                await hooks?.attemptWasLost(claimed, slot: slot)
                idle(slot)
                for attempt in attempts { try await release(attempt, slot: slot) }
                try retire(slot, reason: "its folders cannot be emptied for the next attempt (\(unusable))")
                return
            }
            if reason == .supervisorDied {
                // The command's group is gone with its supervisor: the attempts go back, the slot gets a new supervisor.
                await hooks?.attemptWasLost(claimed, slot: slot)
                idle(slot)
                for (attempt, disposition) in zip(attempts, dispositions) {
                    guard case .finished(let result, _) = disposition else { continue }
                    try await giveBack(attempt, slot: slot, result: result, batcher: batcher)
                }
                resources.supervisor.shutdown()
                guard let supervisor = await newSupervisor() else {
                    try retire(slot, reason: "its supervisor process died and no new one could be started")
                    return
                }
                resources.supervisor = supervisor
                continue
            }
            var secrets = configuration.secretEnvironment.secrets
            if let met = hooks?.secretsMet(bySlot: slot) { secrets.formUnion(met) }
            var results: [(ClaimedAttempt, AttemptResult)] = []
            for (index, (attempt, disposition)) in zip(attempts, dispositions).enumerated() {
                guard case .finished(var result, let reported) = disposition else {
                    // Its batch ended before reporting it: it runs again, alone (no retry is spent).
                    _ = try await retrying("requeue", { try await self.queue.requeue(attemptID: attempt.id, token: attempt.leaseToken, solo: true) })
                    onEvent(.attemptReleased(slot: slot, attempt: attempt))
                    continue
                }
                if index == 0 { await hooks?.attemptDidEnd(attempt, slot: slot, result: &result) }
                if !secrets.isEmpty {
                    // Output files are read, scrubbed and rewritten off the cooperative pool.
                    result = await blockingOffPool { [result, secrets] in
                        var scrubbed = result
                        AttemptRunner.scrub(&scrubbed, secrets: secrets)
                        return scrubbed
                    }
                }
                if var reported {
                    reported.message = reported.message.map { secrets.scrubbed($0) }
                    await hooks?.testWasReported(attempt, reported, result: result)
                }
                if result.folder != nil { await hooks?.attemptWasKept(attempt, result: result) }
                results.append((attempt, result))
            }
            idle(slot)
            if case .terminated? = reason, isStopping {
                for (attempt, _) in results { try await release(attempt, slot: slot) }
                return
            }
            for (attempt, result) in results { batcher.finish(attempt, result: result) }
        }
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

    /// The slot runs nothing now: no process, no lease to keep.
    private func idle(_ slot: Int) {
        state.withLock {
            $0.processes[slot] = nil
            $0.tokens[slot] = nil
            $0.companions[slot] = nil
        }
    }

    /// An attempt whose supervisor died: back to the queue, unless it lost its supervisor ``maximumLosses`` times — then
    /// its result is the infrastructure error.
    private func giveBack(_ claimed: ClaimedAttempt, slot: Int, result: AttemptResult, batcher: RoundBatcher) async throws {
        let key = "\(claimed.scenario.id)\u{0}\(claimed.lane?.rawValue ?? "")\u{0}\(claimed.attempt)"
        let losses = state.withLock { state -> Int in
            state.losses[key, default: 0] += 1
            return state.losses[key]!
        }
        logger.warning(
            "a worker slot's supervisor died",
            metadata: ["worker.slot": "\(slot)", "scenario.id": "\(claimed.scenario.id)", "attempt.losses": "\(losses)"])
        let requeue = losses < Self.maximumLosses
        onEvent(.attemptLost(slot: slot, attempt: claimed, requeued: requeue))
        if requeue {
            _ = try await retrying("release", { try await self.queue.release(claimed) })
        } else {
            var result = result
            result.error = "its worker's supervisor process died while it ran, \(losses) times"
            batcher.finish(claimed, result: result)
        }
    }

    /// A new supervisor for a slot whose supervisor died; `nil` when none starts (after a few tries).
    private func newSupervisor() async -> Supervisor? {
        for delay in [0, 100, 500] {
            if delay > 0 { try? await Task.sleep(for: .milliseconds(delay)) }
            if let supervisor = try? Supervisor() { return supervisor }
        }
        return nil
    }

    /// Takes a slot out of the run; when it was the last one, the run cannot go on here.
    private func retire(_ slot: Int, reason: String) throws {
        onEvent(.slotRetired(slot: slot, reason: reason))
        let retired = state.withLock { state -> Int in
            state.retiredSlots += 1
            return state.retiredSlots
        }
        if retired == configuration.workers {
            throw CoordinatorError(.noSlots, "every worker slot was retired; the last one because \(reason)")
        }
    }

    /// Records what a round acknowledged.
    private func acknowledged(_ claimed: ClaimedAttempt, _ result: AttemptResult, _ ack: CompletionAck) {
        logger.debug(
            "attempt finished",
            metadata: [
                "scenario.id": "\(claimed.scenario.id)", "attempt.number": "\(claimed.attempt)",
                "attempt.outcome": "\(result.outcome.rawValue)", "attempt.duration_ms": "\(result.durationMilliseconds)",
            ])
        onEvent(
            ack.accepted
                ? .attemptFinished(slot: claimed.worker.slot, attempt: claimed, result: result, ack: ack)
                : .attemptReleased(slot: claimed.worker.slot, attempt: claimed))
    }

    private func release(_ claimed: ClaimedAttempt, slot: Int) async throws {
        _ = try await retrying("release", { try await self.queue.release(claimed) })
        onEvent(.attemptReleased(slot: slot, attempt: claimed))
    }

    /// Heartbeats for this host's leases, and the reaper for everybody's. A lease the heartbeat no longer holds was taken
    /// back while this host could not renew it (it was cut off, or stalled): the attempt runs elsewhere now, so its
    /// process group here is ended (its late result is fenced out by the queue).
    private func maintainLeases(_ batcher: RoundBatcher) async {
        let heartbeatEvery = configuration.lease / 3
        var sinceReap = Duration.zero
        while !Task.isCancelled {
            do { try await Task.sleep(for: heartbeatEvery) } catch { return }
            let (running, companions) = state.withLock { ($0.tokens, $0.companions.values.flatMap { $0 }) }
            let tokens = Array(running.values) + companions + batcher.heldTokens
            do {
                // A heartbeat that does not answer within its period (a partition) is tried again at the next one.
                let held = try await within(heartbeatEvery) { try await self.queue.heartbeat(tokens: tokens) }
                for (slot, token) in running where !held.contains(token) { stopOrphan(slot: slot, token: token) }
                sinceReap += heartbeatEvery
                if sinceReap >= configuration.lease / 2 {
                    sinceReap = .zero
                    let reclaimed = try await within(heartbeatEvery) { try await self.queue.reapExpired(runID: self.configuration.runID) }
                    if reclaimed > 0 { onEvent(.leasesReclaimed(count: reclaimed)) }
                }
            } catch is CancellationError {
                return
            } catch {
                logger.warning("lease maintenance failed; retrying", metadata: ["error": "\(queue.describe(error))"])
            }
        }
    }

    /// Ends the attempt a slot runs under a lease that was taken back, if it still runs under that lease.
    private func stopOrphan(slot: Int, token: UUID) {
        let process = state.withLock { state in state.tokens[slot] == token ? state.processes[slot] : nil }
        guard let process else { return }
        logger.warning(
            "an attempt's lease was taken back while this host could not renew it; ending it (it runs elsewhere now)",
            metadata: ["worker.slot": "\(slot)"])
        onEvent(.leaseLost(slot: slot))
        process.terminate()
    }

    /// Attempts leased by processes of this host that no longer exist go back to the queue at once,
    /// without waiting for their leases to expire (a resumed run after a SIGKILL, say).
    private func reclaimDeadLocalLeases() async throws {
        let holders = try await retrying("lease holders", { try await self.queue.leaseHolders(runID: self.configuration.runID) })
        var reclaimed = 0
        for holder in holders {
            guard let owner = ProcessIdentity(holder.owner), owner.host == configuration.host, owner.pid != getpid() else { continue }
            guard kill(owner.pid, 0) != 0, errno == ESRCH else { continue }
            if try await retrying("requeue", { try await self.queue.requeue(attemptID: holder.attemptID, token: holder.token, solo: false) }) {
                reclaimed += 1
            }
        }
        if reclaimed > 0 {
            logger.info("requeued attempts of dead workers", metadata: ["attempts.count": "\(reclaimed)"])
            onEvent(.leasesReclaimed(count: reclaimed))
        }
    }

    /// A queue round, retried while the database is unavailable. A round whose answer was lost may have been committed:
    /// its results are recorded once (the queue accepts a result sent again under the same token), and the attempts it
    /// claimed, which nobody here knows, go back to the queue at once.
    private func performRound(_ round: QueueRound) async throws -> QueueRoundReply {
        var failed = false
        let clock = ContinuousClock()
        let began = clock.now
        let reply = try await retrying("round", onFailure: { failed = true }) { try await self.queue.round(round) }
        onEvent(
            .queueRound(
                claimants: round.claimants.count, claimed: reply.claimed.count { $0 != nil }, completed: round.completions.count,
                duration: clock.now - began, counts: reply.counts))
        guard failed else { return reply }
        let known =
            state.withLock { state in
                Array(state.tokens.values) + state.companions.values.flatMap { $0 } + (state.batcher?.heldTokens ?? [])
            }
            + reply.claimed.compactMap { $0?.leaseToken }
        let owner = WorkerIdentity(host: configuration.host, pid: getpid(), slot: 0).process.description
        let released = try await retrying("release lost claims") {
            try await self.queue.releaseOrphans(runID: self.configuration.runID, owner: owner, keeping: known)
        }
        if released > 0 { logger.info("gave back claims whose answer was lost", metadata: ["attempts.count": "\(released)"]) }
        return reply
    }

    /// Retries a queue operation while the database is unavailable, for as long as the queue's ``AttemptQueueClient/patience``
    /// (ORCHESTRATE_CONNECT_TIMEOUT, 15 s) since it stopped answering — then the run gives up with one line (exit 3).
    /// Each try gets that long too: a request for a pooled connection waits without an error while the server is down.
    /// The outage is said once, and its end.
    private func retrying<T: Sendable>(
        _ what: String, onFailure: () -> Void = {}, _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let clock = ContinuousClock()
        // A run being stopped gives back what it holds if the queue answers soon; it does not wait out the whole patience.
        let patience = isStopping ? min(queue.patience, Self.stoppingPatience) : queue.patience
        var delay = Duration.milliseconds(100)
        while true {
            try Task.checkCancellation()
            let tried = clock.now
            // While the queue does not answer, a try gets what is left of the patience.
            let left = state.withLock { $0.unreachableSince }.map { patience - (tried - $0) } ?? patience
            do {
                let value = try await within(max(left, .milliseconds(100)), operation)
                let outage = state.withLock { state -> Duration? in
                    defer { state.unreachableSince = nil }
                    return state.unreachableSince.map { clock.now - $0 }
                }
                if let outage { logger.warning("the run queue answers again", metadata: ["outage.seconds": "\(outage.components.seconds)"]) }
                return value
            } catch {
                if error is CancellationError { throw error }
                onFailure()
                // The outage began when the first try that failed began (it may have waited all along).
                let (since, first, reason) = state.withLock { state -> (ContinuousClock.Instant, Bool, String) in
                    let first = state.unreachableSince == nil
                    if first {
                        state.unreachableSince = tried
                        state.unreachableReason = queue.describe(error)
                    }
                    return (state.unreachableSince ?? tried, first, state.unreachableReason)
                }
                if first {
                    logger.warning("the run queue does not answer; retrying", metadata: ["queue.operation": "\(what)", "error": "\(reason)"])
                }
                if clock.now - since >= patience {
                    throw CoordinatorError(
                        .queueUnavailable,
                        "the run queue did not answer for \(patience.components.seconds) s (ORCHESTRATE_CONNECT_TIMEOUT): \(reason)")
                }
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(1))
            }
        }
    }
}
