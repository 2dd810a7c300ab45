/// Why a scenario ended as it did, judged from replay vs live outcomes, retries and recent history.
package enum Verdict: String, Sendable, Codable, CaseIterable, CodingKeyRepresentable {
    /// Passes in replay and live.
    case stable
    /// Fails in replay and live: a genuine failure of the app or the test.
    case failing
    /// Passes in replay, fails live: the backend or its content changed.
    case drift
    /// Fails in replay, passes live: the recording no longer fits the app; re-record it.
    case staleRecording = "stale-recording"
    /// Passed and failed in the same mode (retries, or recent runs on the same revision).
    case nondeterministic
}
