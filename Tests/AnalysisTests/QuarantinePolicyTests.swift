import Analysis
import Testing

@Suite("Automatic quarantine")
struct QuarantinePolicyTests {
    @Test("only scenarios with a failure, and automatic entries, are scored; off scores none")
    func candidates() {
        let policy = QuarantinePolicy(threshold: 0.3)
        #expect(policy.needsAutomaticEntries)
        #expect(
            policy.candidates(ran: ["a", "b", "c", "d"], unsteady: ["b"], automatic: ["d", "gone"]) == ["b", "d"])
        #expect(
            policy.candidates(ran: ["a", "b"], unsteady: [], automatic: []).isEmpty,
            "a suite that keeps passing costs no scoring")
        #expect(QuarantinePolicy(threshold: nil).candidates(ran: ["a"], unsteady: ["a"], automatic: ["a"]).isEmpty)
    }

    @Test(
        "a threshold no higher than a flipless score (0.1) can be reached without a failure: every scenario is a candidate"
    )
    func lowThreshold() {
        let policy = QuarantinePolicy(threshold: 0.1)
        #expect(!policy.needsAutomaticEntries)
        #expect(policy.candidates(ran: ["a", "b"], unsteady: [], automatic: []) == ["a", "b"])
    }

    @Test("at the threshold or above goes in with its reason, below comes out")
    func changes() {
        let changes = QuarantinePolicy(threshold: 0.3).changes(scores: [
            ("flaky", 4.0 / 13), ("steady", 1.0 / 14), ("edge", 0.3),
        ])
        #expect(changes.add.map(\.scenarioID) == ["flaky", "edge"])
        #expect(changes.add.first?.reason == "flakiness score 0.31 reached the threshold 0.3")
        #expect(changes.add.last?.reason == "flakiness score 0.3 reached the threshold 0.3")
        #expect(changes.release == ["steady"])
        #expect(QuarantinePolicy(threshold: nil).changes(scores: [("flaky", 0.9)]) == QuarantinePolicy.Changes())
        #expect(
            QuarantinePolicy(threshold: 1).changes(scores: [("always", 1)]).add.first?.reason
                == "flakiness score 1 reached the threshold 1")
    }
}
