import Foundation

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
            let own = entry.attempts.compactMap { attempt -> (finished: Date, point: TrendPoint)? in
                guard attempt.state == .finished, let outcome = attempt.outcome, let finished = attempt.finishedAt
                else {
                    return nil
                }
                return (
                    finished, TrendPoint(passed: outcome == .passed, milliseconds: attempt.durationMilliseconds ?? 0)
                )
            }
            .sorted { $0.finished < $1.finished }.map(\.point)
            guard !own.isEmpty else { continue }
            trends[entry.scenario.id] = Array(((earlier[entry.scenario.id] ?? []) + own).suffix(length))
        }
        return trends
    }
}
