import struct Foundation.UUID

/// Who holds a lease: one worker slot of one process on one host.
package struct WorkerIdentity: Sendable, Hashable, Codable, CustomStringConvertible {
    package var host: String
    package var pid: Int32
    package var slot: Int

    package init(host: String, pid: Int32, slot: Int) {
        self.host = host
        self.pid = pid
        self.slot = slot
    }

    /// `host/pid/slot`, the form stored as the attempt's worker.
    package var description: String { "\(host)/\(pid)/\(slot)" }

    /// The process the slot belongs to: the lease owner.
    package var process: ProcessIdentity { ProcessIdentity(host: host, pid: pid) }
}

/// A coordinator process on a host: who holds the leases of the attempts its slots run.
package struct ProcessIdentity: Sendable, Hashable, CustomStringConvertible {
    package var host: String
    package var pid: Int32

    package init(host: String, pid: Int32) {
        self.host = host
        self.pid = pid
    }

    /// `host/pid`, the form stored as the lease owner.
    package var description: String { "\(host)/\(pid)" }

    /// Parses the stored form back; `nil` for anything else.
    package init?(_ owner: String) {
        guard let slash = owner.lastIndex(of: "/"), let pid = Int32(owner[owner.index(after: slash)...]) else {
            return nil
        }
        self.init(host: String(owner[..<slash]), pid: pid)
    }
}

/// An attempt a worker slot holds the lease of.
package struct ClaimedAttempt: Sendable, Hashable, Codable {
    package var id: Int64
    package var runID: UUID
    package var scenario: Scenario
    /// 1 for the first run, 2 for the first retry…
    package var attempt: Int
    /// The mode of the attempt's lane in a compare run (replay or live); `nil` for the run's mode.
    package var lane: Mode?
    package var maxAttempts: Int
    /// The fence: a completion counts only with the token of the current lease.
    package var leaseToken: UUID
    package var expectedMilliseconds: Int64?
    /// The slot it was handed to, and that slot's port.
    package var worker: WorkerIdentity
    package var port: Int
    /// The hosts this attempt was lost on before (each time its lease expired and it went back to the queue).
    package var lostHosts: [String]

    package init(
        id: Int64, runID: UUID, scenario: Scenario, attempt: Int, lane: Mode? = nil, maxAttempts: Int, leaseToken: UUID,
        expectedMilliseconds: Int64?, worker: WorkerIdentity, port: Int, lostHosts: [String] = []
    ) {
        self.id = id
        self.runID = runID
        self.scenario = scenario
        self.attempt = attempt
        self.lane = lane
        self.maxAttempts = maxAttempts
        self.leaseToken = leaseToken
        self.expectedMilliseconds = expectedMilliseconds
        self.worker = worker
        self.port = port
        self.lostHosts = lostHosts
    }

    /// The mode the attempt runs in: its lane's, else the scenario's in a run of `runMode`.
    package func mode(inRun runMode: Mode) -> Mode { lane ?? scenario.mode(inRun: runMode) }
}

/// A slot asking the queue for work.
package struct Claimant: Sendable, Hashable {
    package var worker: WorkerIdentity
    package var port: Int

    package init(worker: WorkerIdentity, port: Int) {
        self.worker = worker
        self.port = port
    }
}

/// One round trip to the queue: the results of the slots that finished, and claims for the slots that
/// are free. Every slot of a coordinator waiting at the same moment shares it (group commit).
package struct QueueRound: Sendable {
    package var runID: UUID
    package var completions: [(claimed: ClaimedAttempt, result: AttemptResult)]
    /// All of one process.
    package var claimants: [Claimant]

    package init(
        runID: UUID, completions: [(claimed: ClaimedAttempt, result: AttemptResult)] = [], claimants: [Claimant] = []
    ) {
        self.runID = runID
        self.completions = completions
        self.claimants = claimants
    }
}

/// The queue's answer to a ``QueueRound``.
package struct QueueRoundReply: Sendable {
    /// One per completion, in order.
    package var acks: [CompletionAck]
    /// One per claimant, in order: the attempt it got, if any.
    package var claimed: [ClaimedAttempt?]
    /// What is left of the run after this round; present when a claimant got nothing.
    package var counts: QueueCounts?
    /// Claimed retries that should not run on the slot that failed them (attempt id → that slot), for now.
    package var avoiding: [Int64: String]

    package init(
        acks: [CompletionAck], claimed: [ClaimedAttempt?], counts: QueueCounts?, avoiding: [Int64: String] = [:]
    ) {
        self.acks = acks
        self.claimed = claimed
        self.counts = counts
        self.avoiding = avoiding
    }
}

/// What a worker learned from running an attempt.
package struct AttemptResult: Sendable, Hashable, Codable {
    package var outcome: Outcome
    package var exitCode: Int?
    package var signal: Int?
    package var durationMilliseconds: Int64
    package var pid: Int32?
    package var stdout: String
    package var stderr: String
    package var error: String?
    /// Where what the attempt left (its artifacts, and its output unless it passed) was kept; `nil` when it left
    /// nothing to keep. Not stored: the folder's place follows from the attempt.
    package var folder: String?
    /// The time its process spent outside its tests (the runner's start-up and end), on the first attempt of a process
    /// whose report timed every test it ran; what `suite.batch: auto` learns batch sizes from.
    package var startupMilliseconds: Int64?
    /// The wall time of its process, beside ``startupMilliseconds``: what the tests of the process cost together, where
    /// they ran in parallel inside it.
    package var processMilliseconds: Int64?
    /// What shows a cause outside the test, when the attempt failed (``RetryEvidence``): its crash, its timeout, or an
    /// upstream's failure at its failing step. Stored with the attempt; reports show it beside the retry it justified.
    package var evidence: String?
    /// A failure with no cause outside the test under `retries.when: evidence`: not retried, since it reproduces.
    package var reproduces: Bool?

    package init(
        outcome: Outcome, exitCode: Int? = nil, signal: Int? = nil, durationMilliseconds: Int64, pid: Int32? = nil,
        stdout: String = "", stderr: String = "", error: String? = nil, folder: String? = nil
    ) {
        self.outcome = outcome
        self.exitCode = exitCode
        self.signal = signal
        self.durationMilliseconds = durationMilliseconds
        self.pid = pid
        self.stdout = stdout
        self.stderr = stderr
        self.error = error
        self.folder = folder
    }
}

/// The queue's answer to a completion.
package struct CompletionAck: Sendable, Hashable {
    /// False when the lease was lost (the attempt was requeued and belongs to someone else now).
    package var accepted: Bool
    /// A retry of the scenario was queued.
    package var retryQueued: Bool
    /// The scenario's settled result, when this completion settled it.
    package var settled: ScenarioResult?

    package init(accepted: Bool, retryQueued: Bool, settled: ScenarioResult?) {
        self.accepted = accepted
        self.retryQueued = retryQueued
        self.settled = settled
    }
}

/// How much of a run is left.
package struct QueueCounts: Sendable, Hashable {
    package var queued: Int
    package var running: Int

    package init(queued: Int, running: Int) {
        self.queued = queued
        self.running = running
    }

    package var isDrained: Bool { queued == 0 && running == 0 }
}

/// A running attempt's lease, as the reaper sees it.
package struct LeaseHolder: Sendable, Hashable {
    package var attemptID: Int64
    package var token: UUID
    package var owner: String

    package init(attemptID: Int64, token: UUID, owner: String) {
        self.attemptID = attemptID
        self.token = token
        self.owner = owner
    }
}
