import struct Foundation.Date
import struct Foundation.UUID

/// One finished (or still open) attempt, as stored.
public struct AttemptRecord: Sendable, Codable, Hashable {
    /// The attempt's row id (what its exchanges and steps belong to).
    public var id: Int64
    public var runID: UUID
    public var scenarioID: String
    public var attempt: Int
    /// The lane of a compare run (replay or live); `nil` for the run's mode.
    public var lane: Mode?
    public var state: String
    public var outcome: Outcome?
    public var exitCode: Int?
    public var signal: Int?
    public var worker: String?
    public var startedAt: Date?
    public var finishedAt: Date?
    public var durationMilliseconds: Int64?
    public var stdout: String
    public var stderr: String
    public var error: String?

    public init(
        id: Int64, runID: UUID, scenarioID: String, attempt: Int, lane: Mode? = nil, state: String, outcome: Outcome?, exitCode: Int?,
        signal: Int?, worker: String?, startedAt: Date?, finishedAt: Date?, durationMilliseconds: Int64?,
        stdout: String, stderr: String, error: String?
    ) {
        self.id = id
        self.runID = runID
        self.scenarioID = scenarioID
        self.attempt = attempt
        self.lane = lane
        self.state = state
        self.outcome = outcome
        self.exitCode = exitCode
        self.signal = signal
        self.worker = worker
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.durationMilliseconds = durationMilliseconds
        self.stdout = stdout
        self.stderr = stderr
        self.error = error
    }

    /// A one-line reason for a failed attempt, as people read it.
    public var failureSummary: String {
        switch outcome {
        case .failed?: return "exited with status \(exitCode ?? -1)"
        case .timedOut?: return "timed out after \(durationMilliseconds ?? 0) ms"
        case .crashed?: return "crashed with signal \(signal ?? 0)"
        case .infrastructureError?: return "infrastructure error: \(error ?? "unknown")"
        case .passed?: return "passed"
        case nil: return "did not finish"
        }
    }
}
