/// One of a scenario's recent finished attempts, for the report's trend: passed or not, and how long it took.
package struct TrendPoint: Sendable, Hashable, Codable {
    package var passed: Bool
    package var milliseconds: Int64

    package init(passed: Bool, milliseconds: Int64) {
        self.passed = passed
        self.milliseconds = milliseconds
    }

    /// How many of a scenario's recent attempts its trend shows.
    package static let length = 20

    /// Each scenario's trend: its attempts from before the run (`earlier`, oldest first), then the run's own finished
    /// attempts in the order they finished, the last ``length`` of them.
    package static func trends(
        earlier: [String: [TrendPoint]], adding report: RunReport, length: Int = length
    ) -> [String: [TrendPoint]] {
        var trends = earlier
        for entry in report.scenarios {
            let own = entry.attempts.filter { $0.state == .finished && $0.outcome != nil && $0.finishedAt != nil }
                .sorted { $0.finishedAt! < $1.finishedAt! }
                .map { TrendPoint(passed: $0.outcome == .passed, milliseconds: $0.durationMilliseconds ?? 0) }
            guard !own.isEmpty else { continue }
            trends[entry.scenario.id] = Array(((earlier[entry.scenario.id] ?? []) + own).suffix(length))
        }
        return trends
    }
}
