import Coordinator
import Foundation
import OrchestrateModel
import Testing

@Suite("Run progress")
struct RunProgressTests {
    func attempt(_ id: String, _ number: Int = 1, expected: Int64? = nil) -> ClaimedAttempt {
        ClaimedAttempt(
            id: 1, runID: UUID(), scenario: Scenario(id: id, name: id, command: "true", timeoutMilliseconds: 1000),
            attempt: number, maxAttempts: 2, leaseToken: UUID(), expectedMilliseconds: expected,
            worker: WorkerIdentity(host: "h", pid: 1, slot: 1), port: 1)
    }

    @Test("counts settle per scenario, retries are not double-counted, the ETA shrinks as work is done")
    func counting() {
        let clock = ContinuousClock()
        let start = clock.now
        var progress = RunProgress(expected: ["a": 4000, "b": 2000, "c": nil], workers: 2, fallbackExpected: 1000)
        // 7 s of work over 2 workers, but the 4 s scenario alone takes longer.
        #expect(progress.estimatedRemaining(at: start) == .milliseconds(4000))
        progress.apply(.attemptStarted(slot: 1, attempt: attempt("a", expected: 4000)), at: start)
        progress.apply(.attemptStarted(slot: 2, attempt: attempt("b", expected: 2000)), at: start)
        #expect(progress.running.count == 2)
        let later = start + .seconds(1)
        // 3 s left of a, 1 s of b, 1 s (unknown) of c: 2.5 s over 2 workers, but a alone needs 3 s.
        #expect(progress.estimatedRemaining(at: later) == .milliseconds(3000))
        let failed = AttemptResult(outcome: .failed, exitCode: 1, durationMilliseconds: 900)
        progress.apply(
            .attemptFinished(
                slot: 2, attempt: attempt("b"), result: failed,
                ack: CompletionAck(accepted: true, retryQueued: true, settled: nil)), at: later)
        #expect(progress.settled == 0)
        progress.apply(
            .attemptFinished(
                slot: 2, attempt: attempt("b", 2), result: AttemptResult(outcome: .passed, durationMilliseconds: 5),
                ack: CompletionAck(accepted: true, retryQueued: false, settled: .flaky)), at: later)
        progress.apply(
            .attemptFinished(
                slot: 1, attempt: attempt("a"), result: failed,
                ack: CompletionAck(accepted: true, retryQueued: false, settled: .failed)), at: later)
        #expect(progress.settled == 2)
        #expect(progress.flaky == 1)
        #expect(progress.failed == 1)
        #expect(progress.failures == ["a"])
        #expect(progress.attemptsFinished == 3)
        #expect(progress.running.isEmpty)
        #expect(progress.estimatedRemaining(at: later) == .milliseconds(1000))
    }
}
