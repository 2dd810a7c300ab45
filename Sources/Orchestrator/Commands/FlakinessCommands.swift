import Analysis
import Foundation
import Logging
import MockServer
import OrchestrateModel
import Reports
import Store

/// `orchestrate flaky`, `orchestrate failures`, `orchestrate quarantine` and `orchestrate logs`.
package enum FlakinessCommands {
    /// When a window that ends now began.
    static func windowStart(_ window: Duration) -> Date {
        Date().addingTimeInterval(-Double(window.wholeMilliseconds) / 1000)
    }

    /// The project's scenarios by flakiness score over the window (of one branch's runs, when given), highest first,
    /// with their verdicts and the newest evidence.
    package static func flaky(
        configPath: String, since: Duration, branch: String? = nil, by: FlakyGrouping = .scenario, limit: Int,
        database: String?, format: OutputFormat, logger: Logger
    ) async throws -> String {
        let config = try ConfigLoader.load(path: configPath, required: false)
        let start = windowStart(since)
        if by == .endpoint {
            return try await flakyEndpoints(
                config, since: start, branch: branch, limit: limit, database: database, format: format, logger: logger)
        }
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
                return "no attempts finished since \(start.formatted(.iso8601))"
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

    /// What `orchestrate flaky` ranks: scenarios by their flakiness score, or upstream endpoints by the flakiness they
    /// explain.
    package enum FlakyGrouping: String, Sendable, CaseIterable {
        case scenario, endpoint
    }

    /// `flaky --by endpoint`: the project's upstream endpoints by the nondeterministic and drift verdicts attributed to
    /// them, then by the failed attempts they explain, over the window's whole UTC days.
    static func flakyEndpoints(
        _ config: OrchestrateConfig, since start: Date, branch: String?, limit: Int, database: String?,
        format: OutputFormat, logger: Logger
    ) async throws -> String {
        let lines = try await ListingCommands.withStore(config, database: database, logger: logger) { store in
            try await store.flakyEndpoints(project: config.project, since: start, branch: branch, limit: limit)
        }
        switch format {
        case .json:
            return try OutputFormat.json(lines)
        case .table:
            guard !lines.isEmpty else {
                return "no failure met an upstream endpoint since \(start.formatted(.iso8601))"
            }
            var table = TextTable(
                header: ["NONDETERMINISTIC", "DRIFT", "FAILED", "ENDPOINT"], elidable: ["ENDPOINT"])
            for line in lines {
                table.rows.append([
                    "\(line.nondeterministic)", "\(line.drift)", "\(line.failedAttempts)", line.endpoint,
                ])
            }
            return table.render()
                + "\nNONDETERMINISTIC, DRIFT: verdicts whose failing lane's last failure met the endpoint (else whose first "
                + "network difference that can fail a test was its); FAILED: failed attempts whose failing step's exchange "
                + "with it failed"
        }
    }

    /// `orchestrate suggest ignores`: the JSON fields that changed by themselves between each test's recording and its
    /// newest passing live attempts (``VolatileFields``), as the `mock.ignore` YAML to paste, with the paths ignored
    /// already.
    package static func suggestIgnores(
        configPath: String, since: Duration, minimum: Int, database: String?, logger: Logger
    ) async throws -> String {
        let config = try ConfigLoader.load(path: configPath, required: false)
        let start = windowStart(since)
        let recordings = config.resolve(config.mock.recordings)
        let (samples, seen) = try await ListingCommands.withStore(config, database: database, logger: logger) {
            store in
            let attempts = try await store.passingLiveAttempts(project: config.project, since: start)
            // Each test's recording read once; the attempts' logs (bodies and all) read 50 at a time.
            var recordingsByTest: [String: [Exchange]?] = [:]
            var samples: [VolatileFields.Sample] = []
            for first in stride(from: 0, to: attempts.count, by: 50) {
                let batch = attempts[first..<min(first + 50, attempts.count)]
                let logs = try await store.networkLogs(batch.map(\.attemptID))
                for attempt in batch {
                    if recordingsByTest[attempt.scenarioID] == nil {
                        let scenario = Scenario(
                            id: attempt.scenarioID, name: attempt.scenarioID, command: "", timeoutMilliseconds: 0,
                            uri: attempt.uri)
                        let cassette = try? Cassette.load(MockSessions.cassette(for: scenario, recordings: recordings))
                        recordingsByTest[attempt.scenarioID] = .some(cassette?.entries.map { $0.exchange() })
                    }
                    guard let log = logs[attempt.attemptID], let recorded = recordingsByTest[attempt.scenarioID] ?? nil
                    else { continue }
                    samples.append(
                        VolatileFields.Sample(scenarioID: attempt.scenarioID, recorded: recorded, live: log.exchanges))
                }
            }
            return (samples, attempts.count)
        }
        let ignored = config.mock.server.ignoredJSON
        let suggestions = VolatileFields(minimumChanges: minimum).suggestions(samples) { path in
            ignored.contains { $0.names(path) }
        }
        let window = start.formatted(.iso8601)
        guard !suggestions.isEmpty else {
            return
                "no field changed by itself in \(minimum) or more of \(samples.count) passing live attempts with a recording "
                + "since \(window) (of \(seen) passing live attempts)"
        }
        return
            "# orchestrate suggest ignores: JSON fields that differed from the recording in passing live attempts since "
            + "\(window) (\(samples.count) with a recording); in place of orchestrate.yml's mock.ignore.json\n"
            + VolatileFields.yaml(suggestions, already: ignored.map(\.description))
    }

    /// The project's failures over the window (of one branch's runs, when given) grouped by signature
    /// (``FailureSignature``): the causes that hit the most tests first, each with its failed attempts, tests, runs,
    /// first and last seen, and its newest failure as an example.
    package static func failures(
        configPath: String, since: Duration, branch: String? = nil, limit: Int, database: String?, format: OutputFormat,
        logger: Logger
    ) async throws -> String {
        let config = try ConfigLoader.load(path: configPath, required: false)
        let start = windowStart(since)
        let lines = try await ListingCommands.withStore(config, database: database, logger: logger) { store in
            try await store.failureSignatures(project: config.project, since: start, branch: branch, limit: limit)
        }
        switch format {
        case .json:
            return try OutputFormat.json(lines)
        case .table:
            guard !lines.isEmpty else {
                return "no failures since \(start.formatted(.iso8601)) (of runs judged since)"
            }
            let dates = ListingCommands.minutesUTC()
            var table = TextTable(
                header: ["TESTS", "FAILED", "RUNS", "FIRST (UTC)", "LAST (UTC)", "SIGNATURE", "EXAMPLE"],
                elidable: ["SIGNATURE", "EXAMPLE"])
            for line in lines {
                table.rows.append([
                    "\(line.tests)", "\(line.failures)" + (line.incidents > 0 ? " (\(line.incidents) outage)" : ""),
                    "\(line.runs)", dates.string(from: line.firstSeen), dates.string(from: line.lastSeen),
                    line.signature, line.exampleTest,
                ])
            }
            return table.render()
                + "\nSIGNATURE: place · message with numbers, ids, addresses, times and temporary paths made alike · "
                + "the exchange that failed at the failing step; EXAMPLE: its newest failure's test (--format json: its run and message)"
        }
    }

    package enum QuarantineAction: String, Sendable, CaseIterable {
        case add, remove, list
    }

    package static func quarantine(
        configPath: String, action: QuarantineAction, scenario: String?, reason: String?, until: String? = nil,
        owner: String? = nil, database: String?, format: OutputFormat, logger: Logger
    ) async throws -> String {
        if action != .add, let given = until != nil ? "--until" : owner != nil ? "--owner" : nil {
            throw UsageError(.badValue, "\(given) goes with quarantine add, not \(action.rawValue)")
        }
        let today = Self.today()
        let end = try until.map { try Self.quarantineEnd($0, today: today) }
        let owner = try owner.map(Self.quarantineOwner)
        let config = try ConfigLoader.load(path: configPath, required: false)
        return try await ListingCommands.withStore(config, database: database, logger: logger) { store in
            switch action {
            case .list:
                let entries = try await store.quarantined(project: config.project)
                if format == .json { return try OutputFormat.json(entries) }
                guard !entries.isEmpty else { return "no scenario is quarantined" }
                return Self.quarantineTable(entries, now: Date())
            case .add, .remove:
                guard let scenario else {
                    throw UsageError(
                        .missingValue,
                        "quarantine \(action.rawValue) needs a SCENARIO (an id, or a part of exactly one)")
                }
                let id = try await ListingCommands.scenarioID(scenario, store: store, project: config.project)
                if action == .add {
                    _ = try await store.quarantine(
                        id, project: config.project, reason: reason ?? "quarantined by hand", until: end, owner: owner)
                    let terms = (end.map { ["through \($0) (UTC)"] } ?? []) + (owner.map { ["owner \($0)"] } ?? [])
                    return "quarantined \(id)" + (terms.isEmpty ? "" : " " + terms.joined(separator: ", "))
                        + ": its failures are reported, not fatal (unless --strict)"
                }
                guard try await store.release(id, project: config.project) else {
                    throw UsageError(.notFound, "\(id) is not quarantined (orchestrate quarantine list)")
                }
                return "released \(id) from quarantine"
            }
        }
    }

    /// `quarantine list` as a table: each entry's age, end, owner, who put it there, reason and newest outcomes.
    static func quarantineTable(_ entries: [QuarantineEntry], now: Date) -> String {
        var table = TextTable(
            header: ["SCENARIO", "AGE", "UNTIL", "OWNER", "BY", "REASON", "LAST"], elidable: ["SCENARIO", "REASON"])
        for entry in entries {
            let days = Int(now.timeIntervalSince(entry.addedAt) / 86_400)
            table.rows.append([
                entry.scenarioID, days < 1 ? "today" : "\(days) d", entry.until ?? "-", entry.owner ?? "-",
                entry.automatic ? "threshold" : "hand", entry.reason,
                entry.lastOutcomes.isEmpty ? "-" : entry.lastOutcomes.map(Self.letter).joined(),
            ])
        }
        return table.render()
            + "\nLAST: the newest \(QuarantineEntry.recentOutcomes) outcomes, oldest first (P passed, F failed, T timed out, "
            + "C crashed, I infrastructure error); UNTIL: the last day, UTC"
    }

    private static func letter(_ outcome: String) -> String {
        switch Outcome(rawValue: outcome) {
        case .passed: "P"
        case .failed: "F"
        case .timedOut: "T"
        case .crashed: "C"
        case .infrastructureError: "I"
        case nil: "?"
        }
    }

    /// Today's date in UTC, `YYYY-MM-DD`: the day a quarantine's `--until` is measured against.
    static func today(_ now: Date = Date()) -> String {
        let parts = Calendar.utc.dateComponents([.year, .month, .day], from: now)
        return String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
    }

    /// `--until`: a real date, `YYYY-MM-DD`, not before `today`; usage error otherwise.
    static func quarantineEnd(_ text: String, today: String) throws -> String {
        let digits = text.utf8.enumerated().allSatisfy { index, byte in
            index == 4 || index == 7
                ? byte == UInt8(ascii: "-") : (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
        }
        let numbers = text.split(separator: "-").compactMap { Int($0) }
        guard text.utf8.count == 10, digits, numbers.count == 3,
            let date = Calendar.utc.date(from: DateComponents(year: numbers[0], month: numbers[1], day: numbers[2])),
            Self.today(date) == text
        else {
            throw UsageError(.badValue, "--until \(text) is not a date (YYYY-MM-DD, e.g. \(today))")
        }
        // Dates in this form order as text.
        guard text >= today else {
            throw UsageError(.badValue, "--until \(text) is before today (\(today), UTC)")
        }
        return text
    }

    /// `--owner`: a name of at most 200 characters, without control characters.
    static func quarantineOwner(_ text: String) throws -> String {
        let name = text.trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty, name.count <= 200,
            !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else {
            throw UsageError(.badValue, "--owner must be a name of 1 to 200 characters without control characters")
        }
        return name
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
