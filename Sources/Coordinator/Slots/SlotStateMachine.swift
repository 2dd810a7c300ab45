import OrchestrateModel

import struct Foundation.UUID
import struct ProcessSupervisor.Termination
import struct Reports.RunnerTestResult

/// The decisions of a host's worker slots, apart from carrying them out: when a slot asks the queue for work, runs what
/// it claimed (alone or with a batch), records, releases or requeues it, replaces its supervisor or is retired, and
/// when it stops. Events go in (an answer from the queue, an attempt's end, a stop), actions come out, in the order the
/// ``Coordinator`` carries them out. No I/O and no clock: tested without PostgreSQL or processes.
///
/// ```swift
/// var actions = machine.start(slot)            // [.askForWork]
/// actions = machine.answered(slot, answer)     // [.announce([a]), .run([a])]
/// actions = machine.ended(slot, ending)        // [.ready([…])]
/// actions = machine.readied(slot, results)     // [.record([…]), .askForWork]
/// ```
package struct SlotStateMachine: Sendable {
    /// What one slot is doing.
    package enum SlotState: Sendable, Equatable {
        /// Asking the queue for its next attempt.
        case asking
        /// Got nothing while the run goes on: counting what is left, or waiting for results (`recorded`: the rounds
        /// that had recorded results when it got nothing).
        case waiting(recorded: Int)
        /// Claiming the tests that run with `claimed` in its process (a batch).
        case claimingBatch(ClaimedAttempt)
        /// Its process runs these attempts: the claimed one first, then its batch.
        case running([ClaimedAttempt])
        /// Its attempts ended; the results of those that `finished` are readied (hooks, secrets scrubbed) before they are
        /// recorded, the others go back to run alone. Their leases are held until then. `terminated`: the process was
        /// ended by a signal (a stop, a lost lease).
        case finishing([ClaimedAttempt], finished: [ClaimedAttempt], terminated: Bool)
        /// Its supervisor died; a new one is being started.
        case replacingSupervisor
        /// It takes no more attempts: the queue is drained or the run stopped.
        case done
        /// It was taken out of the run.
        case retired
    }

    /// A result for the queue.
    package struct Completion: Sendable, Hashable {
        package var attempt: ClaimedAttempt
        package var result: AttemptResult

        package init(_ attempt: ClaimedAttempt, _ result: AttemptResult) {
            self.attempt = attempt
            self.result = result
        }
    }

    /// A finished attempt whose result is readied before it is recorded.
    package struct Finished: Sendable, Equatable {
        package var attempt: ClaimedAttempt
        package var result: AttemptResult
        /// What its runner reported of it (`nil`: its process's exit status alone said).
        package var reported: RunnerTestResult?
        /// The slot's mock session belonged to it (the attempt the slot claimed; not a test of its batch).
        package var ownsSession: Bool

        package init(attempt: ClaimedAttempt, result: AttemptResult, reported: RunnerTestResult?, ownsSession: Bool) {
            (self.attempt, self.result, self.reported, self.ownsSession) = (attempt, result, reported, ownsSession)
        }
    }

    /// An attempt whose slot's supervisor died while it ran.
    package struct Lost: Sendable, Equatable {
        package var attempt: ClaimedAttempt
        /// How often it lost its supervisor on this host, this time included.
        package var losses: Int

        package init(attempt: ClaimedAttempt, losses: Int) {
            (self.attempt, self.losses) = (attempt, losses)
        }
    }

    package enum Action: Sendable, Equatable {
        /// Ask the queue for the slot's next attempt.
        case askForWork
        /// Ask the queue how much of the run is left (its answer that gave nothing did not say).
        case countWhatIsLeft
        /// Wait until a round records results since `since` (at most a poll interval), then say
        /// ``SlotStateMachine/waited(_:)``.
        case waitForResults(since: Int)
        /// Say that these attempts started on the slot.
        case announce([ClaimedAttempt])
        /// Claim up to `limit` tests to run with the attempt in its process, expected to take `budgetMilliseconds` at
        /// most.
        case claimBatch(ClaimedAttempt, limit: Int, budgetMilliseconds: Int64)
        /// Run these attempts in the slot's process (the first claimed, the rest its batch).
        case run([ClaimedAttempt])
        /// End the slot's process (the run is stopping).
        case terminate
        /// Ready these results (hooks, secrets scrubbed), then say ``SlotStateMachine/readied(_:_:)``.
        case ready([Finished])
        /// Hand these results to the queue.
        case record([Completion])
        /// Give these back to the queue unfinished (no retry spent).
        case release([ClaimedAttempt])
        /// Back to the queue to run alone: their batch's process ended without reporting them (no retry spent).
        case requeueAlone([ClaimedAttempt])
        /// The slot's supervisor died while this ran: said, and with `requeued` it goes back to the queue (no retry
        /// spent); otherwise it lost its supervisor too often and a ``record(_:)`` follows with its result.
        case lost(Lost, requeued: Bool)
        /// The slot's mock session ended without a result for this attempt (its slot failed under it).
        case forgetSession(ClaimedAttempt)
        /// Start a new supervisor for the slot, then say ``SlotStateMachine/supervisorReplaced(_:started:)``.
        case replaceSupervisor
        /// Take the slot out of the run, saying why; the others go on.
        case retire(reason: String)
        /// The slot's work ends.
        case end
        /// The last slot was retired: the run cannot go on on this host.
        case fail(reason: String)
    }

    /// How often an attempt may lose its slot's supervisor before it is recorded as an infrastructure error instead of
    /// going back to the queue (a scenario that kills its own supervisor would otherwise run forever).
    package static let maximumLosses = 3

    package private(set) var slots: [Int: SlotState] = [:]
    /// A stop was asked for: nothing new starts, running processes end, what they held goes back to the queue.
    package private(set) var stopping = false
    private let workers: Int
    /// How often each attempt (scenario, lane, number) lost its supervisor on this host.
    private var losses: [AttemptKey: Int] = [:]
    private var retired = 0

    /// An attempt of a run, whichever lease it holds now.
    private struct AttemptKey: Hashable {
        var scenarioID: String
        var lane: Mode?
        var attempt: Int

        init(_ claimed: ClaimedAttempt) {
            (scenarioID, lane, attempt) = (claimed.scenario.id, claimed.lane, claimed.attempt)
        }
    }

    package init(workers: Int) {
        self.workers = workers
    }

    /// The attempts whose leases this host's slots hold now (the heartbeat renews them).
    package var heldAttempts: [ClaimedAttempt] {
        slots.values.flatMap { state -> [ClaimedAttempt] in
            switch state {
            case .claimingBatch(let claimed): [claimed]
            case .running(let attempts), .finishing(let attempts, _, _): attempts
            case .asking, .waiting, .replacingSupervisor, .done, .retired: []
            }
        }
    }

    /// The slot whose process runs the attempt claimed under `token`, when one does.
    package func slot(runningUnder token: UUID) -> Int? {
        slots.first { _, state in
            guard case .running(let attempts) = state else { return false }
            return attempts.first?.leaseToken == token
        }?.key
    }

    // MARK: Events

    /// The slot is ready to work.
    package mutating func start(_ slot: Int) -> [Action] {
        askOrEnd(slot)
    }

    /// A stop is asked for. The coordinator ends the processes that run; the slots end as their attempts do.
    package mutating func stop() {
        stopping = true
    }

    /// The queue's answer to the slot: an attempt, or nothing and perhaps what is left of the run.
    package mutating func answered(
        _ slot: Int, claimed: ClaimedAttempt?, counts: QueueCounts?, recorded: Int
    ) -> [Action] {
        guard let claimed else {
            guard let counts else {
                slots[slot] = .waiting(recorded: recorded)
                return [.countWhatIsLeft]
            }
            return counted(slot, counts, recorded: recorded)
        }
        if stopping {
            slots[slot] = .done
            return [.release([claimed]), .end]
        }
        if claimed.lostHosts.count >= Self.maximumLosses {
            // A scenario whose hosts keep vanishing while it runs is not run again: it may be what takes them down.
            slots[slot] = .asking
            let hosts = claimed.lostHosts.joined(separator: ", ")
            let result = AttemptResult(
                outcome: .infrastructureError, durationMilliseconds: 0,
                error: "its host vanished \(claimed.lostHosts.count) times while it ran (\(hosts)): not run again")
            return [.announce([claimed]), .record([Completion(claimed, result)])] + askOrEnd(slot)
        }
        // The first run of a batched suite's test takes others with it into its process.
        if let batch = claimed.scenario.batch, batch.size > 1, claimed.attempt == 1, claimed.lane == nil {
            slots[slot] = .claimingBatch(claimed)
            let budget = batch.milliseconds - (claimed.expectedMilliseconds ?? 0)
            return [.announce([claimed]), .claimBatch(claimed, limit: batch.size - 1, budgetMilliseconds: budget)]
        }
        slots[slot] = .running([claimed])
        return [.announce([claimed]), .run([claimed])]
    }

    /// What is left of the run, asked for after an answer that gave nothing and did not say.
    package mutating func counted(_ slot: Int, _ counts: QueueCounts?) -> [Action] {
        guard case .waiting(let recorded) = slots[slot] else { return [] }
        guard let counts else { return [.waitForResults(since: recorded)] }
        return counted(slot, counts, recorded: recorded)
    }

    private mutating func counted(_ slot: Int, _ counts: QueueCounts, recorded: Int) -> [Action] {
        if counts.isDrained {
            slots[slot] = .done
            return [.end]
        }
        slots[slot] = .waiting(recorded: recorded)
        return [.waitForResults(since: recorded)]
    }

    /// The slot's wait for results is over.
    package mutating func waited(_ slot: Int) -> [Action] {
        askOrEnd(slot)
    }

    /// The slot is about to ask the queue for work: a stop asked for since that was decided ends it instead.
    package mutating func readyToAsk(_ slot: Int) -> [Action] {
        askOrEnd(slot)
    }

    /// The tests claimed to run with the slot's attempt.
    package mutating func batchClaimed(_ slot: Int, _ companions: [ClaimedAttempt]) -> [Action] {
        guard case .claimingBatch(let claimed) = slots[slot] else { return [] }
        slots[slot] = .running([claimed] + companions)
        return (companions.isEmpty ? [] : [.announce(companions)]) + [.run([claimed] + companions)]
    }

    /// The slot's process started; one that starts once a stop was asked for is ended at once.
    package func processStarted(_ slot: Int) -> [Action] {
        stopping ? [.terminate] : []
    }

    /// What became of the attempts the slot ran (``AttemptRunner/Ending``).
    package mutating func ended(_ slot: Int, _ ending: AttemptRunner.Ending) -> [Action] {
        guard case .running(let attempts) = slots[slot] else { return [] }
        if let unusable = ending.slotUnusable {
            // What an earlier attempt left in the slot cannot be removed: its attempts did not run and go back to the
            // queue without a retry spent, and the slot is retired, so that nothing else is blamed for it.
            return [.forgetSession(attempts[0]), .release(attempts)]
                + retire(slot, reason: "its folders cannot be emptied for the next attempt (\(unusable))")
        }
        let finished = zip(attempts, ending.dispositions).compactMap {
            attempt, disposition -> (ClaimedAttempt, AttemptResult, RunnerTestResult?)? in
            guard case .finished(let result, let reported) = disposition else { return nil }
            return (attempt, result, reported)
        }
        let alone = zip(attempts, ending.dispositions).compactMap { attempt, disposition -> ClaimedAttempt? in
            if case .alone = disposition { return attempt }
            return nil
        }
        if ending.reason == .supervisorDied {
            // The command's group is gone with its supervisor: the attempts go back (until they lost it too often), the
            // slot gets a new supervisor.
            slots[slot] = .replacingSupervisor
            var actions: [Action] = [.forgetSession(attempts[0])]
            var exhausted: [Completion] = []
            if !alone.isEmpty { actions.append(.release(alone)) }
            for (attempt, result, _) in finished {
                let key = AttemptKey(attempt)
                losses[key, default: 0] += 1
                let lost = Lost(attempt: attempt, losses: losses[key, default: 0])
                let requeue = lost.losses < Self.maximumLosses
                actions.append(.lost(lost, requeued: requeue))
                if !requeue {
                    var result = result
                    result.error = "its worker's supervisor process died while it ran, \(lost.losses) times"
                    exhausted.append(Completion(attempt, result))
                }
            }
            return actions + (exhausted.isEmpty ? [] : [.record(exhausted)]) + [.replaceSupervisor]
        }
        let terminated: Bool
        if case .terminated? = ending.reason { terminated = true } else { terminated = false }
        slots[slot] = .finishing(attempts, finished: finished.map(\.0), terminated: terminated)
        let ready = finished.map { attempt, result, reported in
            Finished(
                attempt: attempt, result: result, reported: reported,
                ownsSession: attempt.leaseToken == attempts[0].leaseToken)
        }
        return (alone.isEmpty ? [] : [.requeueAlone(alone)]) + [.ready(ready)]
    }

    /// The slot's results, readied: recorded, unless the run stopped the process that made them (they go back to the
    /// queue, to run again when the run is taken up).
    package mutating func readied(_ slot: Int, _ results: [Completion]) -> [Action] {
        guard case .finishing(_, let finished, let terminated) = slots[slot] else { return [] }
        if terminated && stopping {
            slots[slot] = .done
            return [.release(finished), .end]
        }
        return (results.isEmpty ? [] : [.record(results)]) + askOrEnd(slot)
    }

    /// The slot's new supervisor started, or none could be.
    package mutating func supervisorReplaced(_ slot: Int, started: Bool) -> [Action] {
        guard case .replacingSupervisor = slots[slot] else { return [] }
        guard started else {
            return retire(slot, reason: "its supervisor process died and no new one could be started")
        }
        return askOrEnd(slot)
    }

    // MARK: Helpers

    private mutating func askOrEnd(_ slot: Int) -> [Action] {
        if stopping {
            slots[slot] = .done
            return [.end]
        }
        slots[slot] = .asking
        return [.askForWork]
    }

    private mutating func retire(_ slot: Int, reason: String) -> [Action] {
        slots[slot] = .retired
        retired += 1
        guard retired < workers else {
            return [
                .retire(reason: reason), .fail(reason: "every worker slot was retired; the last one because \(reason)"),
            ]
        }
        return [.retire(reason: reason), .end]
    }
}
