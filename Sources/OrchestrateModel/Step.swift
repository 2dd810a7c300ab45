import struct Foundation.Date

/// One step of a scenario as the test reported it (`Given I open the app`), with its timing.
package struct Step: Sendable, Equatable, Codable {
    /// 1-based order within the attempt; exchanges name the step they happened in by it.
    package var position: Int
    package var keyword: String
    package var name: String
    /// passed, failed, skipped, pending, undefined, or started while it is still running.
    package var status: String
    package var startedAt: Date
    package var finishedAt: Date?
    package var error: String?

    package init(position: Int, keyword: String, name: String, status: String, startedAt: Date, finishedAt: Date? = nil, error: String? = nil) {
        self.position = position
        self.keyword = keyword
        self.name = name
        self.status = status
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.error = error
    }
}
