import struct Foundation.Date
import struct Foundation.UUID

/// Everything a report needs about one run: the run, its scenarios, their attempts.
public struct RunReport: Sendable, Codable {
    public struct ScenarioEntry: Sendable, Codable {
        public var scenario: Scenario
        public var result: ScenarioResult
        public var attempts: [AttemptRecord]
        /// Why it ended so (set when the run is judged), the sentence that says it, and the network differences
        /// that explain it.
        public var verdict: Verdict?
        public var verdictReason: String?
        public var evidence: [NetworkDifference]
        /// It was quarantined when the run started: a failure is reported, not fatal (unless --strict).
        public var quarantined: Bool

        public init(
            scenario: Scenario, result: ScenarioResult, attempts: [AttemptRecord], verdict: Verdict? = nil, verdictReason: String? = nil,
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

        /// Not a plain pass: failed, flaky, unfinished, or a verdict other than stable. Reports show its attempts in detail.
        public var needsAttention: Bool { result != .passed || (verdict != nil && verdict != .stable) }

        /// Whether it makes the run fail: a failure, or a verdict that needs action (failing, drift, stale
        /// recording) — unless quarantined, which only `strict` overrides.
        public func failsRun(strict: Bool) -> Bool {
            let bad = result == .failed || result == .pending || [.failing, .drift, .staleRecording].contains(verdict)
                || (strict && (result == .flaky || verdict == .nondeterministic))
            return bad && (!quarantined || strict)
        }

        public var totalMilliseconds: Int64 { attempts.reduce(0) { $0 + ($1.durationMilliseconds ?? 0) } }
    }

    public var runID: UUID
    public var state: String
    public var startedAt: Date
    public var finishedAt: Date?
    public var host: String
    public var gitRevision: String?
    public var mode: Mode
    public var scenarios: [ScenarioEntry]

    public init(
        runID: UUID, state: String, startedAt: Date, finishedAt: Date?, host: String, gitRevision: String?, mode: Mode = .replay,
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

    public func count(_ result: ScenarioResult) -> Int { scenarios.filter { $0.result == result }.count }
}
