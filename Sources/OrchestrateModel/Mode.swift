/// How the mock server treats the backend for an attempt.
public enum Mode: String, Sendable, Codable, CaseIterable, Hashable {
    case replay
    case record
    case live
    case mock
    case compare
}
