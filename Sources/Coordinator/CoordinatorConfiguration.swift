import OrchestrateModel

import struct Foundation.UUID

/// How a coordinator runs a run's attempts on this host.
package struct CoordinatorConfiguration: Sendable {
    package var runID: UUID
    /// Worker slots on this host; each holds a port and runs one attempt at a time.
    package var workers: Int
    /// This host's name, part of every lease owner.
    package var host: String
    /// The folder scenario commands run in.
    package var workingDirectory: String
    /// Where per-attempt folders (HOME, TMPDIR, artifacts, logs) are made.
    package var attemptsDirectory: String
    package var mode: Mode
    /// The environment every attempt starts from (usually the coordinator's own).
    package var baseEnvironment: [String: String]
    /// The frozen clock handed to scenarios as ORCHESTRATE_NOW (ISO 8601).
    package var frozenNow: String
    /// A lease not renewed for this long is taken back. Default 30 s.
    package var lease: Duration = .seconds(30)
    /// How often idle slots look for work at least (results recorded on this host wake them at once). Default 100 ms.
    package var pollInterval: Duration = .milliseconds(100)
    /// Between SIGTERM and SIGKILL when a process group is ended. Default 5 s.
    package var grace: Duration = .seconds(5)
    /// Bytes of stdout and of stderr kept per attempt (half from the start, half from the end). Default 64 KiB.
    package var captureBytes: Int = 64 * 1024
    /// The secret environment values: given to the attempts whose stored environment holds their placeholder, and
    /// replaced wherever they appear in an attempt's output.
    package var secretEnvironment = SecretEnvironment()
    /// Which failures are retried (while retries are left): every one, or those with evidence of a cause outside the
    /// test.
    package var retryWhen = RetryWhen.any

    package init(
        runID: UUID, workers: Int, host: String, workingDirectory: String, attemptsDirectory: String, mode: Mode,
        baseEnvironment: [String: String], frozenNow: String
    ) {
        self.runID = runID
        self.workers = workers
        self.host = host
        self.workingDirectory = workingDirectory
        self.attemptsDirectory = attemptsDirectory
        self.mode = mode
        self.baseEnvironment = baseEnvironment
        self.frozenNow = frozenNow
    }
}

/// What the coordinator reports while it works, for progress displays.
package enum CoordinatorEvent: Sendable {
    case slotReady(slot: Int, port: Int)
    case attemptStarted(slot: Int, attempt: ClaimedAttempt)
    case attemptFinished(slot: Int, attempt: ClaimedAttempt, result: AttemptResult, ack: CompletionAck)
    /// Returned to the queue unfinished (interruption or a lost lease).
    case attemptReleased(slot: Int, attempt: ClaimedAttempt)
    /// The slot's supervisor died while the attempt ran: the attempt goes back to the queue (no retry spent), unless
    /// this happened to it too often (`requeued` false: it is recorded as an infrastructure error).
    case attemptLost(slot: Int, attempt: ClaimedAttempt, requeued: Bool)
    /// The slot got no working supervisor again and stopped taking attempts; the others go on.
    case slotRetired(slot: Int, reason: String)
    /// Attempts of dead workers went back to the queue.
    case leasesReclaimed(count: Int)
    /// A round trip to the queue: how many slots asked and got an attempt, how many results it carried, how long it
    /// took (retries included), and what is left of the run when it said.
    case queueRound(claimants: Int, claimed: Int, completed: Int, duration: Duration, counts: QueueCounts?)
    /// The slot's lease was taken back while this host could not renew it: its attempt is ended here (it runs
    /// elsewhere).
    case leaseLost(slot: Int)
}

/// How the coordinator's work ended.
package enum CoordinatorOutcome: Sendable, Equatable {
    /// Every attempt of the run is finished.
    case drained
    /// Stopped on request; unfinished attempts are back in the queue for `--resume`.
    case interrupted
}
