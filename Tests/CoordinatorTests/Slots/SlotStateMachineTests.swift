import Coordinator
import Foundation
import OrchestrateModel
import ProcessSupervisor
import Testing

/// The slots' decisions, without a queue, a process or a clock: events in, actions out.
@Suite("The slot state machine")
struct SlotStateMachineTests {
    typealias Action = SlotStateMachine.Action

    static func attempt(
        _ id: String, number: Int = 1, batch: Batch? = nil, lostHosts: [String] = [], lane: Mode? = nil
    ) -> ClaimedAttempt {
        ClaimedAttempt(
            id: Int64(abs(id.hashValue % 100_000)), runID: UUID(),
            scenario: Scenario(id: id, name: id, command: "true", timeoutMilliseconds: 1000, batch: batch),
            attempt: number, lane: lane,
            maxAttempts: 3, leaseToken: UUID(), expectedMilliseconds: 2000,
            worker: WorkerIdentity(host: "h", pid: 1, slot: 1), port: 1,
            lostHosts: lostHosts)
    }

    static let passed = AttemptResult(outcome: .passed, exitCode: 0, durationMilliseconds: 5)
    static let failed = AttemptResult(outcome: .failed, exitCode: 1, durationMilliseconds: 5)

    static func finished(_ result: AttemptResult) -> AttemptRunner.Disposition { .finished(result, reported: nil) }

    @Test("an attempt is announced, run, readied and recorded; then the slot asks again")
    func oneAttempt() {
        var machine = SlotStateMachine(workers: 2)
        let a = Self.attempt("a")
        #expect(machine.start(1) == [.askForWork])
        #expect(machine.answered(1, claimed: a, counts: nil, recorded: 0) == [.announce([a]), .run([a])])
        #expect(machine.heldAttempts == [a] && machine.slot(runningUnder: a.leaseToken) == 1)
        #expect(machine.processStarted(1).isEmpty)
        let actions = machine.ended(
            1, AttemptRunner.Ending(dispositions: [Self.finished(Self.failed)], reason: .exited(1)))
        #expect(
            actions == [
                .ready([SlotStateMachine.Finished(attempt: a, result: Self.failed, reported: nil, ownsSession: true)])
            ])
        // Readied results still hold their lease until they are recorded.
        #expect(machine.heldAttempts == [a] && machine.slot(runningUnder: a.leaseToken) == nil)
        let completion = SlotStateMachine.Completion(a, Self.failed)
        #expect(machine.readied(1, [completion]) == [.record([completion]), .askForWork])
        #expect(machine.heldAttempts.isEmpty)
    }

    @Test("nothing claimed: the slot counts what is left when the answer did not say; drained ends it, else it waits")
    func nothingClaimed() {
        var machine = SlotStateMachine(workers: 1)
        _ = machine.start(1)
        #expect(machine.answered(1, claimed: nil, counts: nil, recorded: 4) == [.countWhatIsLeft])
        #expect(machine.counted(1, QueueCounts(queued: 0, running: 2)) == [.waitForResults(since: 4)])
        #expect(machine.waited(1) == [.askForWork])
        #expect(
            machine.answered(1, claimed: nil, counts: QueueCounts(queued: 0, running: 1), recorded: 5) == [
                .waitForResults(since: 5)
            ])
        _ = machine.waited(1)
        #expect(machine.answered(1, claimed: nil, counts: QueueCounts(queued: 0, running: 0), recorded: 6) == [.end])
        #expect(machine.slots[1] == .done)
    }

    @Test(
        "a stop: a claim that arrives is released, a process that starts is ended, a stopped attempt's results go back")
    func stop() {
        var machine = SlotStateMachine(workers: 2)
        let (a, b) = (Self.attempt("a"), Self.attempt("b"))
        _ = machine.start(1)
        _ = machine.start(2)
        _ = machine.answered(1, claimed: a, counts: nil, recorded: 0)
        machine.stop()
        #expect(machine.processStarted(1) == [.terminate])
        #expect(machine.answered(2, claimed: b, counts: nil, recorded: 0) == [.release([b]), .end])
        _ = machine.ended(
            1, AttemptRunner.Ending(dispositions: [Self.finished(Self.failed)], reason: .terminated(status: 143)))
        #expect(machine.readied(1, [SlotStateMachine.Completion(a, Self.failed)]) == [.release([a]), .end])
        #expect(machine.heldAttempts.isEmpty)
        // An attempt that ended on its own while the run stopped is recorded; the slot takes nothing more.
        var other = SlotStateMachine(workers: 1)
        _ = other.start(1)
        _ = other.answered(1, claimed: a, counts: nil, recorded: 0)
        other.stop()
        _ = other.ended(1, AttemptRunner.Ending(dispositions: [Self.finished(Self.passed)], reason: .exited(0)))
        #expect(
            other.readied(1, [SlotStateMachine.Completion(a, Self.passed)]) == [
                .record([SlotStateMachine.Completion(a, Self.passed)]), .end,
            ])
    }

    @Test(
        "a first attempt of a batched test claims companions within its budget; what its process did not report runs again alone"
    )
    func batch() {
        var machine = SlotStateMachine(workers: 4)
        let batch = Batch(command: "run {ids}", size: 5, milliseconds: 60_000)
        let head = Self.attempt("t1", batch: batch)
        _ = machine.start(1)
        let claimed = machine.answered(1, claimed: head, counts: nil, recorded: 0)
        #expect(claimed == [.announce([head]), .claimBatch(head, limit: 4, budgetMilliseconds: 58_000)])
        let (t2, t3) = (Self.attempt("t2", batch: batch), Self.attempt("t3", batch: batch))
        #expect(machine.batchClaimed(1, [t2, t3]) == [.announce([t2, t3]), .run([head, t2, t3])])
        #expect(Set(machine.heldAttempts) == [head, t2, t3])
        let ending = AttemptRunner.Ending(
            dispositions: [Self.finished(Self.passed), .alone, Self.finished(Self.failed)], reason: .exited(1))
        #expect(
            machine.ended(1, ending) == [
                .requeueAlone([t2]),
                .ready([
                    SlotStateMachine.Finished(attempt: head, result: Self.passed, reported: nil, ownsSession: true),
                    SlotStateMachine.Finished(attempt: t3, result: Self.failed, reported: nil, ownsSession: false),
                ]),
            ])
        // Until its results are readied, the slot holds the lease of every test of its batch (the heartbeat renews them).
        #expect(Set(machine.heldAttempts) == [head, t2, t3])
        // A retry, and a lane of a compare run, run alone.
        #expect(
            machine.answered(2, claimed: Self.attempt("t4", number: 2, batch: batch), counts: nil, recorded: 0).last
                .map(Self.isRun) == true)
        #expect(
            machine.answered(3, claimed: Self.attempt("t5", batch: batch, lane: .live), counts: nil, recorded: 0).last
                .map(Self.isRun) == true)
    }

    static func isRun(_ action: Action) -> Bool {
        if case .run(let attempts) = action { return attempts.count == 1 }
        return false
    }

    @Test(
        "a supervisor that dies: its attempts go back until the third loss, then are recorded saying so; the slot gets a new one"
    )
    func supervisorDies() {
        var machine = SlotStateMachine(workers: 2)
        let a = Self.attempt("a")
        let died = AttemptRunner.Ending(dispositions: [Self.finished(Self.failed)], reason: .supervisorDied)
        _ = machine.start(1)
        for loss in 1...2 {
            _ = machine.answered(1, claimed: a, counts: nil, recorded: 0)
            let lost = SlotStateMachine.Lost(attempt: a, losses: loss)
            #expect(
                machine.ended(1, died) == [
                    .forgetSession(a), .lost(lost, requeued: true), .replaceSupervisor,
                ])
            #expect(machine.supervisorReplaced(1, started: true) == [.askForWork])
        }
        _ = machine.answered(1, claimed: a, counts: nil, recorded: 0)
        let actions = machine.ended(1, died)
        var recorded = Self.failed
        recorded.error = "its worker's supervisor process died while it ran, 3 times"
        #expect(
            actions == [
                .forgetSession(a), .lost(SlotStateMachine.Lost(attempt: a, losses: 3), requeued: false),
                .record([SlotStateMachine.Completion(a, recorded)]), .replaceSupervisor,
            ])
        // No new supervisor: the slot is retired; the other goes on. When it too is retired, the run cannot go on here.
        let noSupervisor = "its supervisor process died and no new one could be started"
        #expect(machine.supervisorReplaced(1, started: false) == [.retire(reason: noSupervisor), .end])
        _ = machine.start(2)
        _ = machine.answered(2, claimed: a, counts: nil, recorded: 0)
        _ = machine.ended(2, died)
        let last = machine.supervisorReplaced(2, started: false)
        #expect(last.count == 2 && last.first == .retire(reason: noSupervisor))
        if case .fail(let reason)? = last.last {
            #expect(reason.hasPrefix("every worker slot was retired"))
        } else {
            Issue.record("\(last)")
        }
    }

    @Test("a slot whose folders cannot be emptied: its attempts go back without a retry spent and the slot is retired")
    func unusableSlot() {
        var machine = SlotStateMachine(workers: 2)
        let a = Self.attempt("a")
        _ = machine.start(1)
        _ = machine.answered(1, claimed: a, counts: nil, recorded: 0)
        let actions = machine.ended(1, AttemptRunner.Ending(dispositions: [], slotUnusable: "ENAMETOOLONG"))
        #expect(
            actions == [
                .forgetSession(a), .release([a]),
                .retire(reason: "its folders cannot be emptied for the next attempt (ENAMETOOLONG)"), .end,
            ])
        #expect(machine.slots[1] == .retired && machine.heldAttempts.isEmpty)
    }

    @Test("an attempt whose hosts vanished three times is recorded as an infrastructure error naming them, never run")
    func vanishedHosts() {
        var machine = SlotStateMachine(workers: 1)
        let a = Self.attempt("a", lostHosts: ["n1", "n2", "n3"])
        _ = machine.start(1)
        let actions = machine.answered(1, claimed: a, counts: nil, recorded: 0)
        #expect(actions.count == 3 && actions.first == .announce([a]) && actions.last == .askForWork)
        guard case .record(let completions) = actions[1], let completion = completions.first else {
            Issue.record("\(actions)")
            return
        }
        #expect(
            completion.result.outcome == .infrastructureError && completion.result.error?.contains("n1, n2, n3") == true
        )
        // A stop asked for before the slot asks again ends it instead.
        machine.stop()
        #expect(machine.readyToAsk(1) == [.end] && machine.slots[1] == .done)
    }

    @Test("events that do not fit the slot's state change nothing")
    func outOfOrder() {
        var machine = SlotStateMachine(workers: 1)
        _ = machine.start(1)
        #expect(machine.ended(1, AttemptRunner.Ending(dispositions: [])).isEmpty)
        #expect(machine.readied(1, []).isEmpty)
        #expect(machine.batchClaimed(1, []).isEmpty)
        #expect(machine.supervisorReplaced(1, started: true).isEmpty)
        #expect(machine.slots[1] == .asking)
    }
}
