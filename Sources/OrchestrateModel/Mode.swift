/// How the mock server treats the backend for an attempt.
public enum Mode: String, Sendable, Codable, CaseIterable, Hashable {
    case replay
    case record
    case live
    /// Stubs only: nothing is forwarded.
    case mock
    /// Stubs first, then the recording (when the scenario has one) or the live backend.
    case hybrid
    case compare
}
