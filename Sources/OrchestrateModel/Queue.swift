import struct Foundation.UUID

/// Who holds a lease: one worker slot of one process on one host.
public struct WorkerIdentity: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var pid: Int32
    public var slot: Int

    public init(host: String, pid: Int32, slot: Int) {
        self.host = host
        self.pid = pid
        self.slot = slot
    }

    /// `host/pid/slot`, the form stored as the lease owner.
    public var description: String { "\(host)/\(pid)/\(slot)" }

    /// Parses the stored form back; `nil` for anything else.
    public init?(_ owner: String) {
        let parts = owner.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count >= 3, let pid = Int32(parts[parts.count - 2]), let slot = Int(parts[parts.count - 1]) else { return nil }
        self.init(host: parts.dropLast(2).joined(separator: "/"), pid: pid, slot: slot)
    }
}

/// An attempt a worker slot holds the lease of.
public struct ClaimedAttempt: Sendable, Hashable {
    public var id: Int64
    public var runID: UUID
    public var scenario: Scenario
    /// 1 for the first run, 2 for the first retry…
    public var attempt: Int
    public var maxAttempts: Int
    /// The fence: a completion counts only with the token of the current lease.
    public var leaseToken: UUID
    public var expectedMilliseconds: Int64?

    public init(id: Int64, runID: UUID, scenario: Scenario, attempt: Int, maxAttempts: Int, leaseToken: UUID, expectedMilliseconds: Int64?) {
        self.id = id
        self.runID = runID
        self.scenario = scenario
        self.attempt = attempt
        self.maxAttempts = maxAttempts
        self.leaseToken = leaseToken
        self.expectedMilliseconds = expectedMilliseconds
    }
}

/// What a worker learned from running an attempt.
public struct AttemptResult: Sendable, Hashable {
    public var outcome: Outcome
    public var exitCode: Int?
    public var signal: Int?
    public var durationMilliseconds: Int64
    public var pid: Int32?
    public var stdout: String
    public var stderr: String
    public var error: String?

    public init(
        outcome: Outcome, exitCode: Int? = nil, signal: Int? = nil, durationMilliseconds: Int64, pid: Int32? = nil,
        stdout: String = "", stderr: String = "", error: String? = nil
    ) {
        self.outcome = outcome
        self.exitCode = exitCode
        self.signal = signal
        self.durationMilliseconds = durationMilliseconds
        self.pid = pid
        self.stdout = stdout
        self.stderr = stderr
        self.error = error
    }
}

/// The queue's answer to a completion.
public struct CompletionAck: Sendable, Hashable {
    /// False when the lease was lost (the attempt was requeued and belongs to someone else now).
    public var accepted: Bool
    /// A retry of the scenario was queued.
    public var retryQueued: Bool
    /// The scenario's settled result, when this completion settled it.
    public var settled: ScenarioResult?

    public init(accepted: Bool, retryQueued: Bool, settled: ScenarioResult?) {
        self.accepted = accepted
        self.retryQueued = retryQueued
        self.settled = settled
    }
}

/// How much of a run is left.
public struct QueueCounts: Sendable, Hashable {
    public var queued: Int
    public var running: Int

    public init(queued: Int, running: Int) {
        self.queued = queued
        self.running = running
    }

    public var isDrained: Bool { queued == 0 && running == 0 }
}

/// A running attempt's lease, as the reaper sees it.
public struct LeaseHolder: Sendable, Hashable {
    public var attemptID: Int64
    public var token: UUID
    public var owner: String

    public init(attemptID: Int64, token: UUID, owner: String) {
        self.attemptID = attemptID
        self.token = token
        self.owner = owner
    }
}
