import Coordinator
import Foundation
import OrchestrateModel
import Reports
import Store

/// A finished run's files under `<reports>/<run>/`: `junit.xml`, `report.html`, and for every attempt that did not
/// pass its exchanges as HAR (when it made any) and its step timeline (`attachments/<scenario>/<attempt>.har|.timeline.txt`), which
/// the JUnit XML and the HTML page reference. Every file is written whole (temporary file, then rename).
struct RunReportFiles {
    let runs: RunStore
    /// `<reports>/<run>`.
    let directory: String

    struct Written {
        var junit: [String]
        var html: String
        var attachments: [String: [String]]
    }

    /// `extraJUnit`: another JUnit file (`--junit`), of the whole run or of a part of it.
    /// `trends`: each scenario's recent attempts (``TrendPoint/trends(earlier:adding:length:)``).
    func write(
        _ report: RunReport, extraJUnit: (path: String, report: RunReport)?, trends: [String: [TrendPoint]]
    ) async throws -> Written {
        let attention = report.scenarios.filter(\.needsAttention)
        async let keptRead = runs.keptFiles(report.scenarios.flatMap(\.attempts).map(\.id))
        let logs = try await runs.networkLogs(attention.flatMap(\.attempts).map(\.id))
        let kept = try await keptRead
        var attachments: [String: [String]] = [:]
        for entry in report.scenarios {
            for attempt in entry.attempts where attempt.failed {
                let log = logs[attempt.id] ?? NetworkLog()
                let base =
                    "\(directory)/attachments/\(AttemptFolders.safeName(entry.scenario.id))/"
                    + AttemptFolders.name(attempt: attempt.attempt, lane: attempt.lane)
                // A HAR file of no exchanges says nothing: an attempt that made none has its timeline only.
                if !log.exchanges.isEmpty {
                    try AtomicFile.write(try NetworkLogExport.har(log.exchanges), to: base + ".har")
                    attachments[entry.scenario.id, default: []].append(base + ".har")
                }
                try AtomicFile.write(NetworkLogExport.timeline(log, attempt: attempt), to: base + ".timeline.txt")
                attachments[entry.scenario.id, default: []].append(base + ".timeline.txt")
            }
        }
        // The two documents of a large run take tens of milliseconds each: they are written side by side.
        let junit = ["\(directory)/junit.xml"] + (extraJUnit.map { [$0.path] } ?? [])
        let html = "\(directory)/report.html"
        let written = attachments
        async let page: Void = AtomicFile.write(
            HTMLReport.render(report, logs: logs, attachments: written, kept: kept, trends: trends), to: html)
        let xml = JUnitReport.render(report, attachments: written)
        try AtomicFile.write(xml, to: junit[0])
        if let extraJUnit {
            let own =
                extraJUnit.report.scenarios.count == report.scenarios.count
                ? xml : JUnitReport.render(extraJUnit.report, attachments: written)
            try AtomicFile.write(own, to: extraJUnit.path)
        }
        try await page
        return Written(junit: junit, html: html, attachments: written)
    }
}
