import OrchestrateModel
import Reports

import struct OrchestrateKit.OrchestrateEnvironment

/// What a slot does around each attempt besides running its process — the Orchestrator starts and
/// ends the session of the slot's mock server here (the Coordinator knows no mock server).
package protocol AttemptHooks: Sendable {
    /// Before the attempt's process starts; a thrown error makes the attempt an infrastructure error
    /// saying why, and the process does not start. Returns the contract values that are the session's
    /// own (a replayed cassette's frozen clock and seed), which replace the run's in the environment.
    func attemptWillStart(
        _ attempt: ClaimedAttempt, slot: Int, port: PortLease
    ) async throws -> [OrchestrateEnvironment.Variable: String]
    /// The secret values the slot's attempt met (those of redacted headers and JSON fields of its exchanges): they go
    /// out of its output too. Asked once the attempt's process ended, before ``attemptDidEnd(_:slot:result:)``.
    func secretsMet(bySlot slot: Int) -> Secrets
    /// After the attempt ended, before its result is recorded; may turn the result into an
    /// infrastructure error (a recording that cannot be written, say).
    func attemptDidEnd(_ attempt: ClaimedAttempt, slot: Int, result: inout AttemptResult) async
    /// The attempt will not end here: its slot's supervisor died while it ran, and it goes back to the queue. What it
    /// did so far stays with it; nothing of it is kept as a result (a recording in progress is dropped).
    func attemptWasLost(_ attempt: ClaimedAttempt, slot: Int) async
    /// The run is over on this host (drained or stopped).
    func slotsDidStop() async
    /// What the attempt kept (``AttemptResult/folder``, scrubbed of secrets), before its result is recorded: stored
    /// where other hosts can read it.
    func attemptWasKept(_ attempt: ClaimedAttempt, result: AttemptResult) async
    /// What the runner of the attempt's process reported of its test (a suite with a results format), before its result
    /// is recorded: stored as the attempt's step.
    func testWasReported(_ attempt: ClaimedAttempt, _ reported: RunnerTestResult, result: AttemptResult) async
    /// Results this host's slots finished that the queue never recorded (it stopped answering for good): to be kept, so
    /// that the run, taken up again, does not run them again.
    func resultsWereNotRecorded(_ results: [(claimed: ClaimedAttempt, result: AttemptResult)]) async
}

/// Every step is optional: a hook does what it is for and nothing else.
extension AttemptHooks {
    package func attemptWillStart(
        _ attempt: ClaimedAttempt, slot: Int, port: PortLease
    ) async throws -> [OrchestrateEnvironment.Variable: String] {
        [:]
    }
    package func secretsMet(bySlot slot: Int) -> Secrets { Secrets() }
    package func attemptDidEnd(_ attempt: ClaimedAttempt, slot: Int, result: inout AttemptResult) async {}
    package func attemptWasLost(_ attempt: ClaimedAttempt, slot: Int) async {}
    package func slotsDidStop() async {}
    package func resultsWereNotRecorded(_ results: [(claimed: ClaimedAttempt, result: AttemptResult)]) async {}
    package func attemptWasKept(_ attempt: ClaimedAttempt, result: AttemptResult) async {}
    package func testWasReported(_ attempt: ClaimedAttempt, _ reported: RunnerTestResult, result: AttemptResult) async {
    }
}
