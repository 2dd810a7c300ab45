import Analysis
import Foundation
import Logging
import OrchestrateModel
import Reports
import Store

/// `orchestrate flaky`, `orchestrate quarantine` and `orchestrate logs`.
package enum FlakinessCommands {
    /// The project's scenarios by flakiness score over the window (of one branch's runs, when given), highest first,
    /// with their verdicts and the newest evidence.
    package static func flaky(
        configPath: String, since: Duration, branch: String? = nil, limit: Int, database: String?, format: OutputFormat,
        logger: Logger
    ) async throws -> String {
        let config = try ConfigLoader.load(path: configPath, required: false)
        let start = Date().addingTimeInterval(-Double(since.wholeMilliseconds) / 1000)
        let (lines, traffic) = try await ListingCommands.withStore(config, database: database, logger: logger) {
            store in
            (
                try await store.flakiness(project: config.project, since: start, branch: branch, limit: limit),
                try await store.madeExchanges(project: config.project, since: start)
            )
        }
        switch format {
        case .json:
            return try OutputFormat.json(lines)
        case .table:
            guard !lines.isEmpty else {
                return "no attempts finished since \(ISO8601DateFormatter().string(from: start))"
            }
            // A project whose tests made no exchange in the window (a plain suite) has no backends to tell apart.
            var table = TextTable(
                header: ["SCORE"] + (traffic ? ["REPLAY", "LIVE"] : ["PASSED"])
                    + ["FLIPS", "VERDICTS", "SCENARIO", "LAST EVIDENCE"], elidable: ["VERDICTS", "SCENARIO"])
            for line in lines {
                let verdicts = line.verdicts.sorted { $0.key.rawValue < $1.key.rawValue }.map {
                    "\($0.value) \($0.key.rawValue)"
                }.joined(
                    separator: ", ")
                let evidence =
                    line.lastEvidence.map { "\($0.place.map { "\($0): " } ?? "")\($0)" } ?? line.lastReason ?? "-"
                let tallies =
                    traffic
                    ? [
                        line.lanes[Mode.replay.rawValue].map { "\($0.passed)/\($0.attempts)" } ?? "-",
                        line.lanes[Mode.live.rawValue].map { "\($0.passed)/\($0.attempts)" } ?? "-",
                    ] : ["\(line.passed)/\(line.attempts)"]
                table.rows.append(
                    [String(format: "%.2f", line.score) + (line.quarantined ? " Q" : "")] + tallies + [
                        "\(line.flips)/\(line.transitions)", verdicts.isEmpty ? "-" : verdicts, line.scenarioID,
                        evidence,
                    ])
            }
            return table.render()
                + (traffic
                    ? "\nREPLAY, LIVE: passed/attempts against a controlled (replay, mock, hybrid) and the real backend (live, record)"
                        + "\nscore = (flips + 1) / (transitions + 10) on the same branch, revision and backend; Q = quarantined"
                    : "\nscore = (flips + 1) / (transitions + 10) on the same branch and revision; Q = quarantined")
        }
    }

    package enum QuarantineAction: String, Sendable, CaseIterable {
        case add, remove, list
    }

    package static func quarantine(
        configPath: String, action: QuarantineAction, scenario: String?, reason: String?, database: String?,
        format: OutputFormat, logger: Logger
    ) async throws -> String {
        let config = try ConfigLoader.load(path: configPath, required: false)
        return try await ListingCommands.withStore(config, database: database, logger: logger) { store in
            switch action {
            case .list:
                let entries = try await store.quarantined(project: config.project)
                if format == .json { return try OutputFormat.json(entries) }
                guard !entries.isEmpty else { return "no scenario is quarantined" }
                var table = TextTable(header: ["SCENARIO", "SINCE", "BY", "REASON"], elidable: ["SCENARIO"])
                let dates = ISO8601DateFormatter()
                for entry in entries {
                    table.rows.append([
                        entry.scenarioID, dates.string(from: entry.addedAt), entry.automatic ? "threshold" : "hand",
                        entry.reason,
                    ])
                }
                return table.render()
            case .add, .remove:
                guard let scenario else {
                    throw UsageError(
                        .missingValue,
                        "quarantine \(action.rawValue) needs a SCENARIO (an id, or a part of exactly one)")
                }
                let id = try await ListingCommands.scenarioID(scenario, store: store, project: config.project)
                if action == .add {
                    _ = try await store.quarantine(id, project: config.project, reason: reason ?? "quarantined by hand")
                    return "quarantined \(id): its failures are reported, not fatal (unless --strict)"
                }
                guard try await store.release(id, project: config.project) else {
                    throw UsageError(.notFound, "\(id) is not quarantined (orchestrate quarantine list)")
                }
                return "released \(id) from quarantine"
            }
        }
    }

    /// An attempt's step timeline with its exchanges, or (`har`) its exchanges as HAR 1.2 (without a final newline).
    package static func logs(
        configPath: String, run: String, scenario: String, attempt: Int?, lane: Mode?, har: Bool, database: String?,
        logger: Logger
    ) async throws -> String {
        let config = try ConfigLoader.load(path: configPath, required: false)
        return try await ListingCommands.withStore(config, database: database, logger: logger) { store in
            let runID = try await runID(run, store: store)
            let id = try await ListingCommands.scenarioID(scenario, store: store, project: config.project)
            guard let record = try await store.attempt(runID: runID, scenarioID: id, number: attempt, lane: lane) else {
                throw UsageError(
                    .notFound,
                    "run \(runID.uuidString.lowercased()) has no \(lane.map { "\($0.rawValue) " } ?? "")attempt\(attempt.map { " \($0)" } ?? "") of \(id)"
                )
            }
            let log = try await store.networkLogs([record.id])[record.id] ?? NetworkLog()
            if har { return String(decoding: try NetworkLogExport.har(log.exchanges), as: UTF8.self) }
            return String(NetworkLogExport.timeline(log, attempt: record).dropLast())
        }
    }

    /// A run id, or the start of exactly one.
    static func runID(_ text: String, store: RunStore) async throws -> UUID {
        if let id = UUID(uuidString: text) { return id }
        let matches = try await store.runIDs(startingWith: text.lowercased())
        guard matches.count == 1 else {
            throw UsageError(
                .notFound,
                matches.isEmpty
                    ? "no run id starts with \"\(text)\" (orchestrate runs lists them)"
                    : "\"\(text)\" starts \(matches.count) run ids; give more of it")
        }
        return matches[0]
    }
}
