import struct Foundation.Date
import struct Foundation.UUID

/// One finished (or still open) attempt, as stored.
public struct AttemptRecord: Sendable, Codable, Hashable {
    public var runID: UUID
    public var scenarioID: String
    public var attempt: Int
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
        runID: UUID, scenarioID: String, attempt: Int, state: String, outcome: Outcome?, exitCode: Int?,
        signal: Int?, worker: String?, startedAt: Date?, finishedAt: Date?, durationMilliseconds: Int64?,
        stdout: String, stderr: String, error: String?
    ) {
        self.runID = runID
        self.scenarioID = scenarioID
        self.attempt = attempt
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
