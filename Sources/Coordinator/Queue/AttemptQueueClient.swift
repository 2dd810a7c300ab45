import struct Foundation.UUID
import OrchestrateModel

/// The run queue as the coordinator uses it. The Store's PostgreSQL queue is the implementation;
/// every method must be atomic on its own, and a completion must count only under its lease token.
public protocol AttemptQueueClient: Sendable {
    /// Claims the next attempt for `worker`, longest expected first; `nil` when nothing is claimable now.
    func claim(runID: UUID, worker: WorkerIdentity, port: Int) async throws -> ClaimedAttempt?
    /// Records a result (fenced by the lease token), queues a retry when due, settles the scenario.
    func complete(_ claimed: ClaimedAttempt, result: AttemptResult) async throws -> CompletionAck
    /// Returns an attempt to the queue unfinished (interruption).
    func release(_ claimed: ClaimedAttempt) async throws -> Bool
    /// Returns an attempt to the queue if `token` still holds its lease.
    func requeue(attemptID: Int64, token: UUID) async throws -> Bool
    /// Extends the leases of running attempts.
    func heartbeat(tokens: [UUID]) async throws
    /// Requeues attempts whose lease expired; returns how many.
    func reapExpired(runID: UUID) async throws -> Int
    /// The leases held in the run.
    func leaseHolders(runID: UUID) async throws -> [LeaseHolder]
    /// Queued and running attempts left in the run.
    func counts(runID: UUID) async throws -> QueueCounts
}
