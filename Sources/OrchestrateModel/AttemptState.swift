/// Where an attempt is in the queue (`attempts.state`).
package enum AttemptState: String, Sendable, Codable, CaseIterable, Hashable {
    /// Waiting to be claimed.
    case queued
    /// Claimed under a lease: running, or claimed ahead by a slot about to run it.
    case running
    /// Its result is recorded (``Outcome``).
    case finished
    /// Given back unfinished — its worker died or lost the database, or the run was stopped — and followed by a new
    /// attempt with the same number: an execution's exchanges and steps stay with the row they were made under.
    case abandoned
}
