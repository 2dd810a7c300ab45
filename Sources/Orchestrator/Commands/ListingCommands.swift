import Foundation
import Logging
import OrchestrateModel
import Store
import Suites

/// `orchestrate scenarios` and `orchestrate runs`.
package enum ListingCommands {
    struct ScenarioLine: Encodable {
        var id: String
        var name: String
        var command: String
        var tags: [String]
        var timeoutMs: Int64
        var expectedMs: Int64?
        /// A scenario never seen passing: its last attempt's time.
        var lastMs: Int64?
        var uri: String?
        var line: Int?
    }

    struct RunLine: Encodable {
        var id: String
        var state: RunState
        var createdAt: Date
        var finishedAt: Date?
        var host: String
        var gitRevision: String?
        var workingDirectory: String
        var mode: String
        var workers: Int
        var retries: Int
        var scenarios: Int
        var passed: Int
        var flaky: Int
        var failed: Int
        var pending: Int
        var hosts: [String]
        var slots: Int
        var joinKey: String?
        var project: String
        var branch: String?

        init(_ run: RunSummary) {
            id = run.id.uuidString.lowercased()
            state = run.state
            createdAt = run.createdAt
            finishedAt = run.finishedAt
            host = run.host
            gitRevision = run.gitRevision
            workingDirectory = run.workingDirectory
            mode = run.mode
            workers = run.workers
            retries = run.retries
            scenarios = run.scenarios
            passed = run.passed
            flaky = run.flaky
            failed = run.failed
            pending = run.pending
            hosts = run.hosts
            slots = run.slots
            joinKey = run.joinKey
            project = run.project
            branch = run.branch
        }
    }

    /// What would run, in the order the planner would start it (longest expected first, unknown first).
    package static func scenarios(
        configPath: String, only: [String], tags: String?, database: String?, format: OutputFormat,
        console: Console = .standard,
        logger: Logger
    ) async throws -> String {
        let config = try ConfigLoader.load(path: configPath)
        let suite = try await SuiteSources(config.suite).scenarios(config.suiteContext)
        let scenarios = try ScenarioSelection(only: only, tags: tags).select(from: suite, configPath: config.path)
        var expected: [String: Int64] = [:]
        var last: [String: Int64] = [:]
        do {
            (expected, last) = try await withStore(config, database: database, logger: logger) { store in
                let expected = try await store.expectedDurations(scenarios.map(\.id), project: config.project)
                let unknown = scenarios.map(\.id).filter { expected[$0] == nil }
                return (expected, try await store.lastDurations(unknown, project: config.project))
            }
        } catch let error as UsageError {
            console.note("expected durations unknown: \(error.message)")
        } catch {
            console.note("warning: no history (\(error)); expected durations unknown")
        }
        let lines = scenarios.map {
            ScenarioLine(
                id: $0.id, name: $0.name, command: $0.command, tags: $0.tags, timeoutMs: $0.timeoutMilliseconds,
                expectedMs: expected[$0.id], lastMs: last[$0.id], uri: $0.uri, line: $0.line)
        }.sorted { ($0.expectedMs ?? .max) > ($1.expectedMs ?? .max) }
        switch format {
        case .json:
            return try OutputFormat.json(lines)
        case .table:
            // A runner's tests are named by their ids: the names are left out when every one is its id.
            let named = lines.contains { $0.name != $0.id }
            var table = TextTable(
                header: ["ID", "EXPECTED", "TIMEOUT", "TAGS"] + (named ? ["NAME"] : []),
                elidable: ["ID", "TAGS", "NAME"])
            func seconds(_ milliseconds: Int64) -> String { String(format: "%.1fs", Double(milliseconds) / 1000) }
            for line in lines {
                let expected =
                    line.expectedMs.map(seconds) ?? line.lastMs.map { "\(seconds($0)), never passed" } ?? "new"
                table.rows.append(
                    [
                        line.id, expected, String(format: "%.0fs", Double(line.timeoutMs) / 1000),
                        line.tags.map { "@\($0)" }.joined(separator: " "),
                    ] + (named ? [line.name] : []))
            }
            return table.render()
        }
    }

    /// The project's history store (the embedded cluster started when it is the one selected; never made: where
    /// there is none, there is no history).
    static func withStore<T: Sendable>(
        _ config: OrchestrateConfig, database: String?, logger: Logger, _ body: @Sendable (RunStore) async throws -> T
    ) async throws -> T {
        try await ProjectDatabase.open(
            flag: database, config: config, logger: logger, maximumConnections: 2, creating: false
        ) { database in
            try await body(RunStore(database: database))
        }
    }

    /// Recent runs with their counts, newest first.
    package static func runs(
        configPath: String, limit: Int, database: String?, format: OutputFormat, logger: Logger
    ) async throws -> String {
        let config = try ConfigLoader.load(path: configPath, required: false)
        let runs = try await withStore(config, database: database, logger: logger) { store in
            try await store.recent(limit: limit)
        }
        switch format {
        case .json:
            return try OutputFormat.json(runs.map(RunLine.init))
        case .table:
            var table = TextTable(
                header: [
                    "RUN", "STARTED (UTC)", "STATE", "TESTS", "PASSED", "FLAKY", "FAILED", "LEFT", "TIME", "HOSTS",
                    "SLOTS", "PROJECT", "BRANCH",
                    "REVISION",
                ], elidable: ["HOSTS", "PROJECT", "BRANCH"])
            // To the minute: the run's id says which one (--format json has the whole time).
            let dates = Self.minutesUTC()
            for run in runs {
                let seconds = run.finishedAt.map { String(format: "%.1fs", $0.timeIntervalSince(run.createdAt)) } ?? "-"
                table.rows.append([
                    run.id.uuidString.lowercased(), dates.string(from: run.createdAt), run.state.rawValue,
                    "\(run.scenarios)",
                    "\(run.passed)", "\(run.flaky)", "\(run.failed)", "\(run.pending)", seconds,
                    run.hosts.isEmpty ? run.host : run.hosts.joined(separator: ","),
                    run.slots > 0 ? "\(run.slots)" : "\(run.workers)", run.project,
                    run.branch ?? "-", String((run.gitRevision ?? "-").prefix(12)),
                ])
            }
            return runs.isEmpty ? "no runs yet (orchestrate run)" : table.render()
        }
    }
}

extension ListingCommands {
    /// `2026-11-27 07:09`: a time in UTC to the minute, as tables show it.
    static func minutesUTC() -> DateFormatter {
        let dates = DateFormatter()
        dates.locale = Locale(identifier: "en_US_POSIX")
        dates.timeZone = TimeZone(identifier: "UTC")
        dates.dateFormat = "yyyy-MM-dd HH:mm"
        return dates
    }

    /// A scenario id with history, or a part of exactly one (case-insensitive).
    static func scenarioID(_ text: String, store: RunStore, project: String) async throws -> String {
        let candidates = try await store.scenarioIDs(containing: text, project: project)
        if candidates.contains(text) { return text }
        guard candidates.count == 1 else {
            throw UsageError(
                .notFound,
                candidates.isEmpty
                    ? "no scenario with history matches \"\(text)\" (orchestrate scenarios lists the ids)"
                    : "\"\(text)\" matches \(candidates.count) scenarios: \(candidates.map { "\"\($0)\"" }.joined(separator: ", ")); say which"
            )
        }
        return candidates[0]
    }

    /// One scenario's attempts over time, newest first, and the steps of the newest with the exchanges each made.
    /// `scenario` is an id, or a part of exactly one id that has history.
    package static func history(
        configPath: String, scenario: String, limit: Int, database: String?, format: OutputFormat, logger: Logger
    ) async throws -> String {
        let config = try ConfigLoader.load(path: configPath, required: false)
        let (id, attempts) = try await withStore(config, database: database, logger: logger) { store in
            let id = try await scenarioID(scenario, store: store, project: config.project)
            return (id, try await store.history(scenarioID: id, project: config.project, limit: limit))
        }
        switch format {
        case .json:
            return try OutputFormat.json(attempts)
        case .table:
            // A scenario that never made an exchange (a plain suite's test) is listed without modes and exchanges.
            let traffic = attempts.contains { $0.exchanges > 0 }
            var table = TextTable(
                header: ["RUN", "STARTED"] + (traffic ? ["MODE"] : []) + ["ATTEMPT", "OUTCOME", "TIME", "STEPS"]
                    + (traffic ? ["EXCHANGES"] : []) + ["REVISION"])
            for attempt in attempts {
                let unmatched = attempt.unmatchedExchanges > 0 ? " (\(attempt.unmatchedExchanges) unmatched)" : ""
                let time = attempt.durationMs.map { String(format: "%.2fs", Double($0) / 1000) } ?? "-"
                var row: [String] = [
                    attempt.runID.uuidString.lowercased(), attempt.startedAt.map { $0.formatted(.iso8601) } ?? "-",
                ]
                if traffic { row.append(attempt.mode) }
                row += ["\(attempt.attempt)", attempt.outcome ?? "-", time, "\(attempt.steps.count)"]
                if traffic { row.append("\(attempt.exchanges)\(unmatched)") }
                row.append(String((attempt.gitRevision ?? "-").prefix(12)))
                table.rows.append(row)
            }
            var text = "\(id)\n" + table.render()
            if let latest = attempts.first, !latest.steps.isEmpty {
                var steps = TextTable(
                    header: ["STATUS", "STEP", "TIME"] + (traffic ? ["EXCHANGES"] : []), elidable: ["STEP"])
                for step in latest.steps {
                    steps.rows.append(
                        [
                            step.status.rawValue, "\(step.keyword)\(step.name)",
                            step.durationMs.map { "\($0) ms" } ?? "-",
                        ]
                            + (traffic ? ["\(step.exchanges)"] : []))
                }
                text += "\n\nsteps of the newest attempt:\n" + steps.render()
            }
            return text
        }
    }
}
