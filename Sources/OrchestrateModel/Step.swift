import struct Foundation.Date

/// One step of a scenario as the test reported it (`Given I open the app`), with its timing.
public struct Step: Sendable, Equatable, Codable {
    /// 1-based order within the attempt; exchanges name the step they happened in by it.
    public var position: Int
    public var keyword: String
    public var name: String
    /// passed, failed, skipped, pending, undefined, or started while it is still running.
    public var status: String
    public var startedAt: Date
    public var finishedAt: Date?
    public var error: String?

    public init(position: Int, keyword: String, name: String, status: String, startedAt: Date, finishedAt: Date? = nil, error: String? = nil) {
        self.position = position
        self.keyword = keyword
        self.name = name
        self.status = status
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.error = error
    }
}
