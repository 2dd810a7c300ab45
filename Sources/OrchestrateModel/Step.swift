import struct Foundation.Date

/// One step of a scenario as the test reported it (`Given I open the app`), with its timing.
package struct Step: Sendable, Equatable, Codable {
    /// 1-based order within the attempt; exchanges name the step they happened in by it.
    package var position: Int
    package var keyword: String
    package var name: String
    package var status: StepStatus
    package var startedAt: Date
    package var finishedAt: Date?
    package var error: String?

    package init(
        position: Int, keyword: String, name: String, status: StepStatus, startedAt: Date, finishedAt: Date? = nil,
        error: String? = nil
    ) {
        self.position = position
        self.keyword = keyword
        self.name = name
        self.status = status
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.error = error
    }
}

/// A step's status as its test (through the control API), a Cucumber report or a runner's results say it: passed,
/// failed, skipped, pending, undefined, ambiguous; `started` while it runs, and `unfinished` for one that was still
/// open when its attempt ended (or the next step started). Reports may say others: kept as they are, lowercased.
package struct StepStatus: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    package var rawValue: String

    package init(rawValue: String) {
        self.rawValue = rawValue
    }

    package init(stringLiteral value: String) {
        self.init(rawValue: value)
    }

    /// A status as a report spells it (`PASSED`, `Failed`).
    package init(reported: String) {
        self.init(rawValue: reported.lowercased())
    }

    package static let passed: StepStatus = "passed"
    package static let failed: StepStatus = "failed"
    package static let skipped: StepStatus = "skipped"
    package static let pending: StepStatus = "pending"
    package static let undefined: StepStatus = "undefined"
    package static let ambiguous: StepStatus = "ambiguous"
    package static let unknown: StepStatus = "unknown"
    package static let started: StepStatus = "started"
    package static let unfinished: StepStatus = "unfinished"

    package var description: String { rawValue }
}
