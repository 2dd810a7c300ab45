import OrchestrateModel
import Reports

import struct OrchestrateKit.OrchestrateEnvironment

/// Several ``AttemptHooks`` as one, each told every step in order: the mock sessions, a suite's per-slot resources (a
/// simulator), where kept files and unrecorded results go. Contract values of later hooks win; the secrets every hook
/// met are scrubbed.
package struct AttemptHookChain: AttemptHooks {
    package let hooks: [any AttemptHooks]

    package init(_ hooks: [any AttemptHooks]) {
        self.hooks = hooks
    }

    package func attemptWillStart(
        _ attempt: ClaimedAttempt, slot: Int, port: PortLease
    ) async throws -> [OrchestrateEnvironment.Variable: String] {
        var contract: [OrchestrateEnvironment.Variable: String] = [:]
        for hook in hooks { contract.merge(try await hook.attemptWillStart(attempt, slot: slot, port: port)) { $1 } }
        return contract
    }

    package func secretsMet(bySlot slot: Int) -> Secrets {
        var secrets = Secrets()
        for hook in hooks { secrets.formUnion(hook.secretsMet(bySlot: slot)) }
        return secrets
    }

    package func attemptDidEnd(_ attempt: ClaimedAttempt, slot: Int, result: inout AttemptResult) async {
        for hook in hooks { await hook.attemptDidEnd(attempt, slot: slot, result: &result) }
    }

    package func attemptWasLost(_ attempt: ClaimedAttempt, slot: Int) async {
        for hook in hooks { await hook.attemptWasLost(attempt, slot: slot) }
    }

    package func slotsDidStop() async {
        for hook in hooks { await hook.slotsDidStop() }
    }

    package func attemptWasKept(_ attempt: ClaimedAttempt, result: AttemptResult) async {
        for hook in hooks { await hook.attemptWasKept(attempt, result: result) }
    }

    package func testWasReported(_ attempt: ClaimedAttempt, _ reported: RunnerTestResult, result: AttemptResult) async {
        for hook in hooks { await hook.testWasReported(attempt, reported, result: result) }
    }

    package func resultsWereNotRecorded(_ results: [(claimed: ClaimedAttempt, result: AttemptResult)]) async {
        for hook in hooks { await hook.resultsWereNotRecorded(results) }
    }
}
