import struct Foundation.Date
import struct Foundation.UUID

/// Everything a report needs about one run: the run, its scenarios, their attempts.
public struct RunReport: Sendable, Codable {
    public struct ScenarioEntry: Sendable, Codable {
        public var scenario: Scenario
        public var result: ScenarioResult
        public var attempts: [AttemptRecord]

        public init(scenario: Scenario, result: ScenarioResult, attempts: [AttemptRecord]) {
            self.scenario = scenario
            self.result = result
            self.attempts = attempts
        }

        public var totalMilliseconds: Int64 { attempts.reduce(0) { $0 + ($1.durationMilliseconds ?? 0) } }
    }

    public var runID: UUID
    public var state: String
    public var startedAt: Date
    public var finishedAt: Date?
    public var host: String
    public var gitRevision: String?
    public var scenarios: [ScenarioEntry]

    public init(
        runID: UUID, state: String, startedAt: Date, finishedAt: Date?, host: String, gitRevision: String?,
        scenarios: [ScenarioEntry]
    ) {
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
