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
                    throw UsageError(
                        .notFound, "no run \(id.uuidString.lowercased()) in the database (see orchestrate runs)")
                }
                runID = id
            case .joinKey(let key):
                guard let joined = try await runs.run(joinKey: key) else {
                    throw UsageError(.notFound, "no run was planned under \(key)")
                }
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
                let logs = try await runs.networkLogs(
                    report.scenarios.filter(\.needsAttention).flatMap(\.attempts).map(\.id))
                let kept = try await runs.keptFiles(report.scenarios.flatMap(\.attempts).map(\.id))
                let trends = TrendPoint.trends(earlier: try await runs.earlierTrends(runID), adding: report)
                try AtomicFile.write(
                    HTMLReport.render(report, logs: logs, attachments: [:], kept: kept, trends: trends), to: html)
                lines.append("report: \(html)")
            }
            return lines.joined(separator: "\n")
        }
    }

    /// `orchestrate artifacts RUN SCENARIO --out DIR`: what the scenario's attempts kept, from the database, each
    /// attempt in a folder of its own (`DIR/attempt-1/…`); `attempt` picks one.
    package static func artifacts(
        runID: UUID, scenario: String, attempt: Int?, out: String, configPath: String, database: String?, logger: Logger
    ) async throws -> String {
        let config = try ConfigLoader.load(path: configPath, required: false)
        let out = OrchestrateConfig.resolve(out, against: FileManager.default.currentDirectoryPath)
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: out, isDirectory: &isFolder), !isFolder.boolValue {
            throw UsageError(.cannotWrite, "--out \(out): that is a file; name a folder")
        }
        return try await ListingCommands.withStore(config, database: database, logger: logger) { runs in
            guard try await runs.summary(runID) != nil else {
                throw UsageError(
                    .notFound, "no run \(runID.uuidString.lowercased()) in the database (see orchestrate runs)")
            }
            let records = try await runs.attemptRecords(runID, scenarioID: scenario)
            guard !records.isEmpty else {
                throw UsageError(
                    .notFound,
                    "run \(runID.uuidString.lowercased()) has no scenario \(scenario) (orchestrate report \(runID.uuidString.lowercased()))"
                )
            }
            let attempts = records.filter { attempt == nil || $0.attempt == attempt }
            guard !attempts.isEmpty else {
                throw UsageError(.notFound, "\(scenario) has no attempt \(attempt ?? 0) in that run")
            }
            let kept = try await runs.keptFiles(attempts.map(\.id))
            var lines: [String] = []
            for record in attempts {
                let name = AttemptName.of(attempt: record.attempt, lane: record.lane)
                let folder = "\(out)/\(name)"
                let written = try await runs.writeKeptFiles(of: record.id, to: out, subfolder: name)
                for file in written { lines.append("\(folder)/\(file.path)  \(file.bytes) bytes") }
                for file in kept[record.id]?.files ?? [] where !file.stored {
                    lines.append(
                        "not stored (over the attempt's artifacts.max-bytes): \(AttemptName.of(attempt: record.attempt, lane: record.lane))/\(file.path)  \(file.bytes) bytes"
                    )
                }
                if let note = kept[record.id]?.leftOutNote {
                    lines.append("\(AttemptName.of(attempt: record.attempt, lane: record.lane)): \(note)")
                }
            }
            return lines.isEmpty ? "\(scenario) kept nothing in that run" : lines.joined(separator: "\n")
        }
    }
}
