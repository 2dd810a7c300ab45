import Foundation
import Logging
import OrchestrateModel
import Reports
import Store

/// `orchestrate report RUN`: a run's JUnit XML and HTML report, written again from the database on any host (a run that
/// many hosts worked has every attempt there), and its summary.
package enum ReportCommand {
    /// Which run: by id, or by the key its nodes joined it under.
    package enum RunName: Sendable {
        case id(UUID)
        case joinKey(String)
    }

    package static func write(
        run: RunName, junit: String?, html: String?, configPath: String, database: String?, logger: Logger
    ) async throws -> String {
        let config = try ConfigLoader.load(path: configPath, required: false)
        let here = FileManager.default.currentDirectoryPath
        let junit = junit.map { OrchestrateConfig.resolve($0, against: here) }
        let html = html.map { OrchestrateConfig.resolve($0, against: here) }
        if let junit { try RunPreflight.checkWritable(junit, named: "--junit") }
        if let html { try RunPreflight.checkWritable(html, named: "--html") }
        return try await ListingCommands.withStore(config, database: database, logger: logger) { runs in
            let runID: UUID
            switch run {
            case .id(let id):
                guard try await runs.summary(id) != nil else {
                    throw UsageError("no run \(id.uuidString.lowercased()) in the database (see orchestrate runs)")
                }
                runID = id
            case .joinKey(let key):
                guard let joined = try await runs.run(joinKey: key) else { throw UsageError("no run was planned under \(key)") }
                runID = joined.id
            }
            let report = try await runs.report(runID)
            var lines = [RunSummaryText.headline(report)]
            lines += RunSummaryText.hostLines(try await runs.hostShares(runID))
            if let junit {
                try AtomicFile.write(JUnitReport.render(report, attachments: [:]), to: junit)
                lines.append("junit: \(junit)")
            }
            if let html {
                let logs = try await runs.networkLogs(report.scenarios.filter(\.needsAttention).flatMap(\.attempts).map(\.id))
                try AtomicFile.write(HTMLReport.render(report, logs: logs, attachments: [:]), to: html)
                lines.append("report: \(html)")
            }
            return lines.joined(separator: "\n")
        }
    }
}
