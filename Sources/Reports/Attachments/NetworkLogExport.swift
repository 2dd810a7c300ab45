import Foundation
import OrchestrateModel

/// An attempt's network log as files people and tools open: a HAR 1.2 document, and the step timeline as text.
package enum NetworkLogExport {
    /// The exchanges as HAR 1.2 JSON (each entry's step, mode, match and note under `_orchestrate`).
    package static func har(_ exchanges: [Exchange]) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(HAR(exchanges: exchanges))
    }

    /// One line per step — offset from the attempt's start, duration, status, the step — with its exchanges under it:
    ///
    ///     +0.000s   210 ms  passed  Given I open the app
    ///                               GET https://api.clinic.test/v1/news → 500 (3 ms)
    package static func timeline(_ log: NetworkLog, attempt: AttemptRecord) -> String {
        var lines = [
            "\(attempt.scenarioID) \(attempt.lane.map { "\($0.rawValue) " } ?? "")attempt \(attempt.attempt): \(attempt.failureSummary)"
        ]
        let pad = String(repeating: " ", count: 32)
        func exchangeLine(_ exchange: Exchange) -> String {
            let status = exchange.status.map(String.init) ?? "no response"
            let note = exchange.note.map { " — \($0)" } ?? ""
            return
                "\(pad)\(exchange.method) \(exchange.url) → \(status) (\(exchange.durationMicroseconds / 1000) ms)\(exchange.matched ? "" : " unmatched")\(note)"
        }
        let timeline = StepTimeline(log, attempt: attempt)
        for row in timeline.rows {
            let duration = row.milliseconds.map { "\($0) ms" } ?? "open"
            lines.append(
                row.offset.padding(toLength: 10, withPad: " ", startingAt: 0) + duration.leftPadded(8) + "  "
                    + row.step.status.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0) + row.title)
            if let error = row.step.error, !error.isEmpty { lines.append(pad + "error: " + error) }
            lines += row.exchanges.map(exchangeLine)
        }
        if !timeline.outside.isEmpty {
            lines.append(log.steps.isEmpty ? "exchanges (no steps reported):" : "exchanges outside steps:")
            lines += timeline.outside.map(exchangeLine)
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
