import Foundation
import OrchestrateModel

/// An attempt's network log as files people and tools open: a HAR 1.2 document, and the step timeline as text.
public enum NetworkLogExport {
    /// The exchanges as HAR 1.2 JSON (each entry's step, mode, match and note under `_orchestrate`).
    public static func har(_ exchanges: [Exchange]) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(HAR(exchanges: exchanges))
    }

    /// One line per step — offset from the attempt's start, duration, status, the step — with its exchanges under it:
    ///
    ///     +0.000s   210 ms  passed  Given I open the app
    ///                               GET https://api.clinic.test/v1/news → 500 (3 ms)
    public static func timeline(_ log: NetworkLog, attempt: AttemptRecord) -> String {
        let start = attempt.startedAt ?? log.steps.first?.startedAt ?? log.exchanges.first?.startedAt ?? Date()
        var lines = ["\(attempt.scenarioID) \(attempt.lane.map { "\($0.rawValue) " } ?? "")attempt \(attempt.attempt): \(attempt.failureSummary)"]
        let pad = String(repeating: " ", count: 32)
        func exchangeLine(_ exchange: Exchange) -> String {
            let status = exchange.status.map(String.init) ?? "no response"
            let note = exchange.note.map { " — \($0)" } ?? ""
            return "\(pad)\(exchange.method) \(exchange.url) → \(status) (\(exchange.durationMicroseconds / 1000) ms)\(exchange.matched ? "" : " unmatched")\(note)"
        }
        for step in log.steps {
            let offset = String(format: "+%.3fs", step.startedAt.timeIntervalSince(start))
            let duration = step.finishedAt.map { "\(Int(($0.timeIntervalSince(step.startedAt) * 1000).rounded())) ms" } ?? "open"
            let title = log.stepTitle(step.position) ?? step.name
            lines.append(offset.padding(toLength: 10, withPad: " ", startingAt: 0) + duration.leftPadded(8) + "  "
                + step.status.padding(toLength: 10, withPad: " ", startingAt: 0) + title)
            if let error = step.error, !error.isEmpty { lines.append(pad + "error: " + error) }
            lines += log.exchanges.filter { $0.stepPosition == step.position }.map(exchangeLine)
        }
        let outside = log.exchanges.filter { exchange in exchange.stepPosition.map { position in !log.steps.contains { $0.position == position } } ?? true }
        if !outside.isEmpty {
            lines.append(log.steps.isEmpty ? "exchanges (no steps reported):" : "exchanges outside steps:")
            lines += outside.map(exchangeLine)
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

extension String {
    func leftPadded(_ width: Int) -> String { count >= width ? self : String(repeating: " ", count: width - count) + self }
}
