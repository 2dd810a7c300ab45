import OrchestrateModel

import struct Foundation.UUID

/// The run queue as the coordinator uses it. The Store's PostgreSQL queue is the implementation;
/// every method must be atomic on its own, and a completion must count only under its lease token.
package protocol AttemptQueueClient: Sendable {
    /// One atomic round trip: records results (each fenced by its lease token), queues retries when due,
    /// settles scenarios, and claims the longest expected attempts for the claimants.
    func round(_ round: QueueRound) async throws -> QueueRoundReply
    /// Returns an attempt to the queue unfinished (interruption).
    func release(_ claimed: ClaimedAttempt) async throws -> Bool
    /// Claims tests that run in one process with `head` (a test of a batched suite): at most `limit`, expected to take
    /// `budgetMilliseconds` together at most, fewer near the end of the run (`slots` share what is queued).
    func claimCompanions(
        of head: ClaimedAttempt, limit: Int, slots: Int, budgetMilliseconds: Int64
    ) async throws -> [ClaimedAttempt]
    /// Returns an attempt to the queue if `token` still holds its lease; `solo`: to run alone (its batch's process
    /// ended before reporting it).
    func requeue(attemptID: Int64, token: UUID, solo: Bool) async throws -> Bool
    /// Extends the leases of running attempts; returns the tokens whose leases are still held (the others were taken
    /// back: their attempts run elsewhere now).
    func heartbeat(_ attempts: [ClaimedAttempt]) async throws -> Set<UUID>
    /// Requeues attempts whose lease expired; returns how many.
    func reapExpired(runID: UUID) async throws -> Int
    /// The leases held in the run.
    func leaseHolders(runID: UUID) async throws -> [LeaseHolder]
    /// Queued and running attempts left in the run.
    func counts(runID: UUID) async throws -> QueueCounts
    /// Gives back the run's attempts leased by `owner` whose tokens are not in `keeping`: claims whose answer was lost
    /// (the server died after committing them). Returns how many.
    func releaseOrphans(runID: UUID, owner: String, keeping tokens: [UUID]) async throws -> Int
    /// How long the queue may stay unreachable before the run gives up (ORCHESTRATE_CONNECT_TIMEOUT).
    var patience: Duration { get }
    /// One line for people about a failure of the queue, without query values.
    func describe(_ error: any Error) -> String
}
