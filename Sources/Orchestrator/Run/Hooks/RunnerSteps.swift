import Coordinator
import Foundation
import OrchestrateModel
import Reports
import Store

/// The step of a runner's test (``Scenario/isRunnerTest``): what its runner reported of it (scrubbed of secrets), named
/// by its id, with the failure's `file:line` before its message, into the network log. A Cucumber scenario's steps come
/// from its report instead (``MockSessions``).
struct RunnerSteps: AttemptHooks {
    let log: NetworkLogWriter

    func testWasReported(_ attempt: ClaimedAttempt, _ reported: RunnerTestResult, result: AttemptResult) async {
        guard attempt.scenario.isRunnerTest else { return }
        let finished = Date()
        log.append(
            Step(
                position: 1, keyword: "", name: attempt.scenario.id,
                status: StepStatus(rawValue: reported.status.rawValue),
                startedAt: finished.addingTimeInterval(-Double(result.durationMilliseconds) / 1000),
                finishedAt: finished,
                error: reported.failure),
            attemptID: attempt.id)
    }
}
