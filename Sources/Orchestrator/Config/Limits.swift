/// The ranges numbers of orchestrate.yml and the flags must lie in.
package enum Limits {
    /// Worker slots on one host: each holds a port, a supervisor process, pipes and folders (``SlotCapacity`` checks
    /// what the host can hold).
    package static let workers = 1...4096
    /// Re-runs of a failed attempt.
    package static let retries = 0...100
}
