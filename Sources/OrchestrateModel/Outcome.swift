/// How one attempt of a scenario ended.
package enum Outcome: String, Sendable, Codable, CaseIterable, Hashable {
    case passed
    /// The command exited with a non-zero status.
    case failed
    /// The time limit ended the command's process group.
    case timedOut = "timed-out"
    /// The command was killed by a signal it did not get from orchestrate.
    case crashed
    /// Orchestrate could not run the attempt (no shell, no working directory, no port).
    case infrastructureError = "infrastructure-error"

    package var isSuccess: Bool { self == .passed }
}

/// The settled result of a scenario in a run, over all its attempts.
package enum ScenarioResult: String, Sendable, Codable, CaseIterable, Hashable {
    case passed
    /// Failed, then passed on a retry: reported, not fatal (unless `--strict`).
    case flaky
    case failed
    /// Not settled yet (queued or running, or the run was interrupted).
    case pending
}
