import Foundation
import OrchestrateModel
import Orchestrator
import Store
import Testing

@Suite("Judging a run")
struct RunJudgeTests {
    static func entry(
        _ id: String, verdict: Verdict?, reason: String?, evidence: [NetworkDifference] = []
    ) -> RunReport.ScenarioEntry {
        RunReport.ScenarioEntry(
            scenario: Scenario(id: id, name: id, command: "true", timeoutMilliseconds: 1000), result: .passed,
            attempts: [],
            verdict: verdict, verdictReason: reason, evidence: evidence
        )
    }

    @Test("verdicts fill the report; only those that differ from what is stored are written")
    func apply() {
        let difference = NetworkDifference(
            kind: .status, request: "GET api.test/v1/news", recorded: "200", live: "500", step: 1)
        let report = RunReport(
            runID: UUID(), state: .finished, startedAt: Date(), finishedAt: Date(), host: "test", gitRevision: nil,
            scenarios: [
                Self.entry("settled-stable", verdict: .stable, reason: "passes"),
                Self.entry("now-drift", verdict: nil, reason: nil),
                Self.entry("same-evidence", verdict: .drift, reason: "because", evidence: [difference]),
                Self.entry("new-evidence", verdict: .drift, reason: "because"),
                Self.entry("not-judged", verdict: nil, reason: nil),
            ]
        )
        let verdicts = [
            StoredVerdict(scenarioID: "settled-stable", verdict: .stable, reason: "passes", evidence: []),
            StoredVerdict(scenarioID: "now-drift", verdict: .drift, reason: "because", evidence: [difference]),
            StoredVerdict(scenarioID: "same-evidence", verdict: .drift, reason: "because", evidence: [difference]),
            StoredVerdict(scenarioID: "new-evidence", verdict: .drift, reason: "because", evidence: [difference]),
        ]
        let (judged, changed) = RunJudge.apply(verdicts, to: report)
        #expect(changed.map(\.scenarioID) == ["now-drift", "new-evidence"])
        #expect(judged.scenarios.map(\.verdict) == [.stable, .drift, .drift, .drift, nil])
        #expect(judged.scenarios[3].evidence == [difference] && judged.scenarios[4].verdictReason == nil)
    }
}
