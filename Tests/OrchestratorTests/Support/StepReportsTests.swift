import Foundation
import OrchestrateModel
import Testing

@testable import Orchestrator

/// Steps from a runner's Cucumber Messages when it retries a scenario itself (cucumber-js `--retry`): the attempt's
/// steps are those of the run that counted, not the failed runs before it.
@Suite("Cucumber Messages with retries")
struct StepReportsTests {
    static func envelopes(_ objects: [[String: Any]]) throws -> Data {
        Data(
            try objects.map { String(decoding: try JSONSerialization.data(withJSONObject: $0), as: UTF8.self) }.joined(
                separator: "\n"
            ).utf8)
    }

    static func timestamp(_ seconds: Int) -> [String: Any] { ["seconds": 1_790_000_000 + seconds, "nanos": 0] }

    @Test("a test case run again (willBeRetried) leaves only the steps of its last run")
    func retried() throws {
        var events: [[String: Any]] = [
            [
                "gherkinDocument": [
                    "feature": [
                        "children": [
                            ["scenario": ["steps": [["id": "g1", "keyword": "Given ", "text": "the sandbox"]]]]
                        ]
                    ]
                ]
            ],
            ["pickle": ["id": "p", "steps": [["id": "s1", "text": "the sandbox", "astNodeIds": ["g1"]]]]],
            ["testCase": ["id": "tc", "pickleId": "p", "testSteps": [["id": "t1", "pickleStepId": "s1"]]]],
        ]
        for (run, status) in [(0, "FAILED"), (1, "FAILED"), (2, "PASSED")] {
            let started = "run-\(run)"
            events.append([
                "testCaseStarted": [
                    "id": started, "testCaseId": "tc", "attempt": run, "timestamp": Self.timestamp(run * 10),
                ]
            ])
            events.append([
                "testStepStarted": [
                    "testCaseStartedId": started, "testStepId": "t1", "timestamp": Self.timestamp(run * 10 + 1),
                ]
            ])
            events.append([
                "testStepFinished": [
                    "testCaseStartedId": started, "testStepId": "t1", "timestamp": Self.timestamp(run * 10 + 2),
                    "testStepResult": ["status": status, "message": "attempt \(run)"],
                ]
            ])
            events.append([
                "testCaseFinished": [
                    "testCaseStartedId": started, "willBeRetried": status == "FAILED",
                    "timestamp": Self.timestamp(run * 10 + 3),
                ]
            ])
        }
        let steps = StepReports.messages(try Self.envelopes(events))
        #expect(
            steps.map { "\($0.keyword)\($0.name) \($0.status) \($0.error ?? "")" } == [
                "Given the sandbox passed attempt 2"
            ])
        #expect(steps.first?.startedAt == Date(timeIntervalSince1970: 1_790_000_021))
    }
}
