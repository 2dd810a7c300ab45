/// Where an attempt is in the queue (`attempts.state`).
package enum AttemptState: String, Sendable, Codable, CaseIterable, Hashable {
    /// Waiting to be claimed.
    case queued
    /// Claimed under a lease: running, or claimed ahead by a slot about to run it.
    case running
    /// Its result is recorded (``Outcome``).
    case finished
}
