import struct Foundation.Date
import struct Foundation.UUID

/// Everything a report needs about one run: the run, its scenarios, their attempts.
package struct RunReport: Sendable, Codable {
    package struct ScenarioEntry: Sendable, Codable {
        package var scenario: Scenario
        package var result: ScenarioResult
        package var attempts: [AttemptRecord]
        /// Why it ended so (set when the run is judged), the sentence that says it, and the network differences
        /// that explain it.
        package var verdict: Verdict?
        package var verdictReason: String?
        package var evidence: [NetworkDifference]
        /// It was quarantined when the run started: a failure is reported, not fatal (unless --strict).
        package var quarantined: Bool
        /// What the planner expected it to take (the median of its recent passes); `nil` when never seen.
        package var expectedMilliseconds: Int64?

        package init(
            scenario: Scenario, result: ScenarioResult, attempts: [AttemptRecord], verdict: Verdict? = nil,
            verdictReason: String? = nil,
            evidence: [NetworkDifference] = [], quarantined: Bool = false
        ) {
            self.scenario = scenario
            self.result = result
            self.attempts = attempts
            self.verdict = verdict
            self.verdictReason = verdictReason
            self.evidence = evidence
            self.quarantined = quarantined
        }

        /// Not a plain pass: failed, flaky, unfinished, or a verdict other than stable. Reports show its attempts in
        /// detail.
        package var needsAttention: Bool { result != .passed || (verdict != nil && verdict != .stable) }

        /// Whether it makes the run fail: a failure, or a verdict that needs action (failing, drift, stale
        /// recording) — unless quarantined, which only `strict` overrides.
        package func failsRun(strict: Bool) -> Bool {
            let bad =
                result == .failed || result == .pending || [.failing, .drift, .staleRecording].contains(verdict)
                || (strict && (result == .flaky || verdict == .nondeterministic))
            return bad && (!quarantined || strict)
        }

        package var totalMilliseconds: Int64 { attempts.reduce(0) { $0 + ($1.durationMilliseconds ?? 0) } }
    }

    package var runID: UUID
    package var state: RunState
    package var startedAt: Date
    package var finishedAt: Date?
    package var host: String
    package var gitRevision: String?
    package var mode: Mode
    package var scenarios: [ScenarioEntry]

    package init(
        runID: UUID, state: RunState, startedAt: Date, finishedAt: Date?, host: String, gitRevision: String?,
        mode: Mode = .replay,
        scenarios: [ScenarioEntry]
    ) {
        self.mode = mode
        self.runID = runID
        self.state = state
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.host = host
        self.gitRevision = gitRevision
        self.scenarios = scenarios
    }

    package func count(_ result: ScenarioResult) -> Int { scenarios.filter { $0.result == result }.count }
}
