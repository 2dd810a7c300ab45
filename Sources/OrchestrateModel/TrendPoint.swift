/// One of a scenario's recent finished attempts, for the report's trend: passed or not, and how long it took.
package struct TrendPoint: Sendable, Hashable, Codable {
    package var passed: Bool
    package var milliseconds: Int64

    package init(passed: Bool, milliseconds: Int64) {
        self.passed = passed
        self.milliseconds = milliseconds
    }
}
