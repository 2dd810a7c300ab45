/// How the mock server treats the backend for an attempt.
package enum Mode: String, Sendable, Codable, CaseIterable, Hashable {
    case replay
    case record
    case live
    /// Stubs only: nothing is forwarded.
    case mock
    /// Stubs first, then the recording (when the scenario has one) or the live backend.
    case hybrid
    case compare
}

extension Mode {
    /// The kind of backend an attempt in this mode talked to: `live` (the real one: live, record) or `replay` (a
    /// controlled one: replay, mock, hybrid). Verdicts and flakiness compare attempts by it.
    package var lane: Mode { self == .live || self == .record ? .live : .replay }
}
