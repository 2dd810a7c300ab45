import struct Foundation.Date
import struct Foundation.UUID

/// One finished (or still open) attempt, as stored.
package struct AttemptRecord: Sendable, Codable, Hashable {
    /// The attempt's row id (what its exchanges and steps belong to).
    package var id: Int64
    package var runID: UUID
    package var scenarioID: String
    package var attempt: Int
    /// The lane of a compare run (replay or live); `nil` for the run's mode.
    package var lane: Mode?
    package var state: AttemptState
    package var outcome: Outcome?
    package var exitCode: Int?
    package var signal: Int?
    package var worker: String?
    package var startedAt: Date?
    package var finishedAt: Date?
    package var durationMilliseconds: Int64?
    package var stdout: String
    package var stderr: String
    package var error: String?
    /// What showed a cause outside the test when it failed (``RetryEvidence``).
    package var evidence: String?
    /// The run's infrastructure incident (``Incident/number``) that explains its failure; `nil` for the others.
    package var incident: Int?
    /// Its failure's signature (``FailureSignature``), once the run is judged; `nil` for a pass.
    package var signature: String?

    package init(
        id: Int64, runID: UUID, scenarioID: String, attempt: Int, lane: Mode? = nil, state: AttemptState,
        outcome: Outcome?, exitCode: Int?,
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

    /// It finished, and did not pass.
    package var failed: Bool { outcome != nil && outcome != .passed }

    /// A one-line reason for a failed attempt, as people read it.
    package var failureSummary: String {
        switch outcome {
        // A test its runner reported failed has its failure instead of an exit status of its own.
        // One whose process exited non-zero says its status, and why its runner's report did not count when it did not.
        case .failed?:
            guard let exitCode else { return error.map { "failed: \($0)" } ?? "failed" }
            return "exited with status \(exitCode)" + (error.map { ": \($0)" } ?? "")
        case .timedOut?: return "timed out after \(durationMilliseconds ?? 0) ms"
        case .crashed?: return "crashed with signal \(signal ?? 0)"
        case .infrastructureError?: return "infrastructure error: \(error ?? "unknown")"
        case .passed?: return "passed"
        case nil: return "did not finish"
        }
    }
}
