import Foundation
import Logging
import OrchestrateModel
import Synchronization

/// Feeds a coordinator's slots from the queue with as few round trips as possible.
///
/// - Group commit: the results and claims of all slots that reach the queue at the same moment travel
///   in one ``QueueRound``; while a round is in flight the next one gathers.
/// - Claim ahead: while attempts are short (recent ones took under a second), each round also claims about half a second
///   of work per slot in advance (one to eight attempts; ``aheadPerSlot(averageMilliseconds:)``), so a slot that
///   finishes starts its next attempt at once and its result goes in a later round. Claimed-ahead attempts hold
///   leases like running ones (the heartbeat covers them) and go back to the queue when the run stops. With long
///   attempts nothing is claimed ahead, so other hosts sharing the run find the work still queued.
/// - Paced results: while slots have work claimed ahead and nobody waits for a claim, results wait for a round until
///   the slots have used half of that work, or for ``resultsWait`` at most; a slot that asks and finds nothing ahead
///   starts a round at once. No-op attempts then cost the database a round per few dozen attempts, not per four.
///
/// It asks the queue itself (through ``PatientQueue``, which outlasts an outage) and says what each round did as
/// ``CoordinatorEvent``s; the coordinator only asks it for work and hands it results.
package final class RoundBatcher: Sendable {
    /// The leases this process holds outside the batcher (the attempts its slots run): a round whose answer was lost
    /// gives back every other lease of this process.
    package typealias Leases = @Sendable () -> [ClaimedAttempt]

    /// What a slot asking for work gets.
    package struct Answer: Sendable {
        package var claimed: ClaimedAttempt?
        /// What is left of the run, when the slot got nothing.
        package var counts: QueueCounts?
        /// How many rounds had recorded results when the answer was given (for ``waitForResults(since:atMost:)``).
        package var recorded = 0
    }

    private struct Waiter: Sendable {
        var id: Int
        /// `nil` for a barrier: resumed once every result handed in before it is recorded.
        var claimant: Claimant?
        var continuation: CheckedContinuation<Answer, any Error>
    }

    private struct Ahead: Sendable {
        var attempt: ClaimedAttempt
        /// The slot this retry should not run on, until `avoidUntil`.
        var avoid: String?
        var avoidUntil: ContinuousClock.Instant
    }

    private struct State {
        var completions: [(claimed: ClaimedAttempt, result: AttemptResult)] = []
        var waiters: [Waiter] = []
        var ahead: [Ahead] = []
        var draining = false
        /// Moving average of recent attempt durations; `nil` until the first result.
        var averageMilliseconds: Double?
        /// Whether the run's tests run in batches: then none is claimed ahead. A test claimed ahead would head a process
        /// of its own (companions come from the queue), where its batch was sized for a few.
        var batched = false
        /// A round that failed for good: every later request fails with it.
        var failure: (any Error)?
        /// The results of the rounds that failed, and of those handed in after: never recorded in the queue.
        var unrecorded: [(claimed: ClaimedAttempt, result: AttemptResult)] = []
        /// The results of the round in flight, until it is answered.
        var sending: [(claimed: ClaimedAttempt, result: AttemptResult)] = []
        /// The slot each compare-run scenario's lane went to (by scenario id): its other lane avoids that slot.
        var laneSlots: [String: String] = [:]
        /// Slots with nothing to do, waiting for results to be recorded (``waitForResults(since:atMost:)``).
        var idle: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextIdle = 0
        /// Rounds that recorded results so far.
        var recorded = 0
        /// Whether a round is due within ``resultsWait`` for results that wait for more.
        var paced = false
        var nextWaiter = 0
        /// Waiters of the round in flight, by id: a cancelled one is resumed at once, and not again by the round.
        var inFlight: [Int: CheckedContinuation<Answer, any Error>] = [:]
    }

    /// Attempts shorter than this on average are claimed ahead.
    static let claimAheadBelow: Double = 1000

    /// How many attempts per slot to hold claimed ahead: none for long attempts; for short ones, about half a second of
    /// work (one to ``mostAhead`` attempts), so that a round's results and claims come in batches the size of several
    /// slots' work rather than one round per finished attempt: the server's work is per round more than per attempt.
    package static func aheadPerSlot(averageMilliseconds: Double?) -> Int {
        guard let average = averageMilliseconds, average < claimAheadBelow else { return 0 }
        return min(max(Int((aheadWork / max(average, 1)).rounded(.up)), 1), mostAhead)
    }

    /// The most attempts a slot holds claimed ahead.
    static let mostAhead = 8

    /// How long a result waits for others to share its round, while its slot has work claimed ahead.
    static let resultsWait: Duration = .milliseconds(100)

    /// How much work, in milliseconds, a slot holds claimed ahead while attempts are short.
    static let aheadWork: Double = 500

    static let avoidance: Duration = .seconds(1)

    private let runID: UUID
    private let workers: Int
    private let process: WorkerIdentity
    private let queue: PatientQueue
    private let slotLeases: Leases
    private let onEvent: @Sendable (CoordinatorEvent) -> Void
    private let logger: Logger
    private let state = Mutex(State())

    package init(
        runID: UUID, workers: Int, process: WorkerIdentity, queue: PatientQueue, logger: Logger,
        slotLeases: @escaping Leases,
        onEvent: @escaping @Sendable (CoordinatorEvent) -> Void
    ) {
        self.runID = runID
        self.workers = workers
        self.process = process
        self.queue = queue
        self.logger = logger
        self.slotLeases = slotLeases
        self.onEvent = onEvent
    }

    /// Hands in a result; it is recorded with the next round (said as `attemptFinished`, or `attemptReleased` when its
    /// lease was lost).
    package func finish(_ claimed: ClaimedAttempt, result: AttemptResult) {
        finish([(claimed, result)])
    }

    /// Hands in the results of one process (a batch's tests) together: they go in one round, where handed in one at a
    /// time the first would start a round of its own and the rest wait for the next.
    package func finish(_ completions: [(claimed: ClaimedAttempt, result: AttemptResult)]) {
        guard !completions.isEmpty else { return }
        let (lead, pace) = state.withLock { state -> (Bool, Bool) in
            for (claimed, result) in completions {
                state.completions.append((claimed, result))
                if claimed.scenario.batch != nil { state.batched = true }
                let average = state.averageMilliseconds ?? Double(result.durationMilliseconds)
                state.averageMilliseconds = average * 0.8 + Double(result.durationMilliseconds) * 0.2
            }
            if roundDue(state) { return (Self.startDraining(&state), false) }
            // Left for a paced round (while a round is in flight too: the next one takes them only when due).
            defer { state.paced = true }
            return (false, !state.paced)
        }
        if lead { Task { await self.drain() } }
        if pace {
            Task {
                try? await Task.sleep(for: Self.resultsWait)
                let lead = state.withLock { state -> Bool in
                    state.paced = false
                    guard !state.completions.isEmpty || !state.waiters.isEmpty else { return false }
                    return Self.startDraining(&state)
                }
                if lead { await self.drain() }
            }
        }
    }

    /// Whether a round should go now: somebody waits for it, the slots hold no work claimed ahead, or the results
    /// waiting are half the work they hold ahead.
    private func roundDue(_ state: State) -> Bool {
        guard state.waiters.isEmpty, !state.ahead.isEmpty else { return true }
        return state.completions.count * 2 >= max(aheadDepth(state), 1)
    }

    /// How many attempts this process holds claimed ahead, for all its slots: none while its tests run in batches.
    private func aheadDepth(_ state: State) -> Int {
        state.batched ? 0 : workers * Self.aheadPerSlot(averageMilliseconds: state.averageMilliseconds)
    }

    /// The next attempt for `claimant`: one claimed ahead at once, else from the next round.
    package func next(for claimant: Claimant) async throws -> Answer {
        let ahead = try state.withLock { state -> ClaimedAttempt? in
            if let failure = state.failure { throw failure }
            return Self.takeAhead(for: claimant, from: &state)
        }
        if let ahead { return Answer(claimed: ahead) }
        return try await wait(claimant)
    }

    /// Returns once a round has recorded results since the answer that gave nothing (its `recorded`), or after
    /// `timeout`: for a slot that got nothing while attempts were still running. A result can bring work back (a retry)
    /// or finish the run, and the slot should know at once — not a poll interval later, which every run paid at its
    /// end. The timeout covers changes made by other hosts. Rounds that only claimed wake nobody (idle slots asking
    /// again would make rounds that wake each other).
    package func waitForResults(since recorded: Int, atMost timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: timeout) }
            group.addTask { await self.resultsRecorded(since: recorded) }
            await group.next()
            group.cancelAll()
        }
    }

    private func resultsRecorded(since recorded: Int) async {
        let id = state.withLock { state -> Int in
            defer { state.nextIdle += 1 }
            return state.nextIdle
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let waiting = state.withLock { state -> Bool in
                    guard !Task.isCancelled, state.recorded == recorded else { return false }
                    state.idle[id] = continuation
                    return true
                }
                if !waiting { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.idle.removeValue(forKey: id) }?.resume()
        }
    }

    /// Returns once every result handed in so far is recorded.
    package func flush() async throws {
        _ = try await wait(nil)
    }

    /// The attempts whose leases the batcher holds: what it claimed ahead, and those whose results are not recorded yet
    /// — due with the next round, carried by the round in flight (tried again while the queue does not answer: a lease
    /// left to expire meanwhile is taken back, and the result refused), or kept for the run taken up again.
    package var heldAttempts: [ClaimedAttempt] {
        state.withLock { state in
            state.ahead.map(\.attempt) + (state.completions + state.sending + state.unrecorded).map(\.claimed)
        }
    }

    /// The results that never reached the queue (its rounds failed for good), for the caller to keep.
    package var unrecorded: [(claimed: ClaimedAttempt, result: AttemptResult)] {
        state.withLock { state in state.unrecorded + state.sending + state.completions.map { ($0.claimed, $0.result) } }
    }

    /// Takes back the attempts claimed ahead, for the caller to return them to the queue.
    func takeAhead() -> [ClaimedAttempt] {
        state.withLock { state in
            defer { state.ahead.removeAll() }
            return state.ahead.map(\.attempt)
        }
    }

    /// Waits for the next round's answer; a cancelled wait ends at once with `CancellationError` (a round that does not
    /// answer — the database went away — never holds a slot that is being stopped).
    private func wait(_ claimant: Claimant?) async throws -> Answer {
        let id = state.withLock { state -> Int in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let lead = state.withLock { state -> Bool in
                    if let failure = state.failure {
                        continuation.resume(throwing: failure)
                        return false
                    }
                    if Task.isCancelled {
                        continuation.resume(throwing: CancellationError())
                        return false
                    }
                    state.waiters.append(Waiter(id: id, claimant: claimant, continuation: continuation))
                    return Self.startDraining(&state)
                }
                if lead { Task { await self.drain() } }
            }
        } onCancel: {
            let continuation = state.withLock { state -> CheckedContinuation<Answer, any Error>? in
                if let index = state.waiters.firstIndex(where: { $0.id == id }) {
                    return state.waiters.remove(at: index).continuation
                }
                return state.inFlight.removeValue(forKey: id)
            }
            continuation?.resume(throwing: CancellationError())
        }
    }

    /// The continuation of an in-flight waiter, taken (so that it is resumed once); `nil` when its wait was cancelled.
    private func take(_ waiter: Waiter) -> CheckedContinuation<Answer, any Error>? {
        state.withLock { $0.inFlight.removeValue(forKey: waiter.id) }
    }

    private static func startDraining(_ state: inout State) -> Bool {
        guard !state.draining else { return false }
        state.draining = true
        return true
    }

    /// A claimed-ahead attempt for `claimant`, longest expected first, never a retry on the slot it
    /// avoids while the avoidance lasts.
    ///
    /// The lanes of a compare run's scenario (replay, live) go to different slots the same way: handing one out makes
    /// the other avoid that slot for a while (the queue does so for lanes it knows ran elsewhere).
    private static func takeAhead(for claimant: Claimant, from state: inout State) -> ClaimedAttempt? {
        let now = ContinuousClock.now
        guard
            let index = state.ahead.firstIndex(where: {
                $0.avoid != claimant.worker.description || $0.avoidUntil <= now
            })
        else {
            return nil
        }
        var attempt = state.ahead.remove(at: index).attempt
        attempt.worker = claimant.worker
        attempt.port = claimant.port
        if attempt.lane != nil {
            state.laneSlots[attempt.scenario.id] = claimant.worker.description
            for other in state.ahead.indices
            where state.ahead[other].attempt.scenario.id == attempt.scenario.id && state.ahead[other].avoid == nil {
                state.ahead[other].avoid = claimant.worker.description
                state.ahead[other].avoidUntil = now + avoidance
            }
        }
        return attempt
    }

    private func drain() async {
        while let (completions, waiters, aheadWanted) = takeRound() {
            let claimants = waiters.compactMap(\.claimant)
            let placeholder = Claimant(worker: process, port: 0)
            let round = QueueRound(
                runID: runID, completions: completions,
                claimants: claimants + Array(repeating: placeholder, count: aheadWanted)
            )
            let reply: QueueRoundReply
            do {
                // Once a round failed for good, no other is tried: its results wait to be kept by the caller.
                if let failure = state.withLock({ $0.failure }) { throw failure }
                reply = try await perform(round)
            } catch {
                state.withLock { state in
                    state.failure = state.failure ?? error
                    state.unrecorded += completions
                    state.sending = []
                }
                for waiter in waiters { take(waiter)?.resume(throwing: error) }
                continue
            }
            state.withLock { $0.sending = [] }
            for (completion, ack) in zip(completions, reply.acks) {
                acknowledged(completion.claimed, completion.result, ack)
            }
            if !completions.isEmpty {
                let idle = state.withLock { state in
                    defer { state.idle.removeAll() }
                    state.recorded += 1
                    return Array(state.idle.values)
                }
                for slot in idle { slot.resume() }
            }
            // What was claimed joins what was claimed ahead before, behind it (it was claimed first, so it is
            // expected to be as long or longer); the waiters take from the front.
            let answers = state.withLock { state -> [Answer] in
                let avoidUntil = ContinuousClock.now + Self.avoidance
                for attempt in reply.claimed.compactMap({ $0 }) {
                    let avoid =
                        reply.avoiding[attempt.id] ?? (attempt.lane == nil ? nil : state.laneSlots[attempt.scenario.id])
                    state.ahead.append(Ahead(attempt: attempt, avoid: avoid, avoidUntil: avoidUntil))
                }
                return waiters.map { waiter in
                    guard let claimant = waiter.claimant else { return Answer() }
                    if let attempt = Self.takeAhead(for: claimant, from: &state) { return Answer(claimed: attempt) }
                    return Answer(counts: reply.counts, recorded: state.recorded)
                }
            }
            for (waiter, answer) in zip(waiters, answers) {
                guard let continuation = take(waiter) else {
                    // Its wait was cancelled: what it claimed goes back with what was claimed ahead.
                    if let attempt = answer.claimed {
                        state.withLock { $0.ahead.insert(Ahead(attempt: attempt, avoid: nil, avoidUntil: .now), at: 0) }
                    }
                    continue
                }
                continuation.resume(returning: answer)
            }
        }
    }

    /// What the next round carries; `nil` (and draining ends) when nobody waits and no result is due.
    private func takeRound() -> (
        completions: [(claimed: ClaimedAttempt, result: AttemptResult)], waiters: [Waiter], aheadWanted: Int
    )? {
        state.withLock { state in
            guard !state.waiters.isEmpty || (!state.completions.isEmpty && (roundDue(state) || !state.paced)) else {
                // Results that wait for more go with the paced round armed when they were handed in.
                state.draining = false
                return nil
            }
            defer {
                state.sending = state.completions
                state.completions.removeAll(keepingCapacity: true)
                for waiter in state.waiters { state.inFlight[waiter.id] = waiter.continuation }
                state.waiters.removeAll(keepingCapacity: true)
            }
            let aheadWanted = max(aheadDepth(state) - state.ahead.count, 0)
            return (state.completions, state.waiters, aheadWanted)
        }
    }

    /// A queue round, tried again while the database is unavailable. A round whose answer was lost may have been
    /// committed: its results are recorded once (the queue accepts a result sent again under the same token), and the
    /// attempts it claimed, which nobody here knows, go back to the queue at once.
    private func perform(_ round: QueueRound) async throws -> QueueRoundReply {
        var failed = false
        let clock = ContinuousClock()
        let began = clock.now
        let reply = try await queue.call("round", onFailure: { failed = true }) { try await $0.round(round) }
        onEvent(
            .queueRound(
                claimants: round.claimants.count, claimed: reply.claimed.count { $0 != nil },
                completed: round.completions.count,
                duration: clock.now - began, counts: reply.counts))
        guard failed else { return reply }
        let known = (slotLeases() + heldAttempts).map(\.leaseToken) + reply.claimed.compactMap { $0?.leaseToken }
        let (runID, owner) = (runID, process.process.description)
        let released = try await queue.call("release lost claims") {
            try await $0.releaseOrphans(runID: runID, owner: owner, keeping: known)
        }
        if released > 0 {
            logger.info("gave back claims whose answer was lost", metadata: ["attempts.count": "\(released)"])
        }
        return reply
    }

    /// Says what a round did with a result.
    private func acknowledged(_ claimed: ClaimedAttempt, _ result: AttemptResult, _ ack: CompletionAck) {
        logger.debug(
            "attempt finished",
            metadata: [
                "scenario.id": "\(claimed.scenario.id)", "attempt.number": "\(claimed.attempt)",
                "attempt.outcome": "\(result.outcome.rawValue)",
                "attempt.duration_ms": "\(result.durationMilliseconds)",
            ])
        onEvent(
            ack.accepted
                ? .attemptFinished(slot: claimed.worker.slot, attempt: claimed, result: result, ack: ack)
                : .attemptReleased(slot: claimed.worker.slot, attempt: claimed))
    }
}
