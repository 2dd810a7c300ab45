import Foundation
import OrchestrateModel
import PostgresNIO

extension RunStore {
    /// The most endpoints a footprint keeps: a test that called more has ``EndpointPattern/every`` instead (a
    /// crawler's footprint would otherwise grow with every id it met).
    package static let footprintEndpoints = 500
    /// The footprints kept per test (its newest revisions), and how long one not recorded again is kept.
    package static let footprintRevisions = 8
    package static let footprintDays = 90

    /// Records what each test of run `runID` that ran touched at `revision` (a clean git revision): `files`, by test id,
    /// are its own files, feature file, cassette and the source files it ran, `covers` the kinds of file its coverage
    /// knows all of; its endpoints are read from its exchanges in the run. A test's earlier footprint at the same
    /// revision is replaced.
    package func saveFootprints(
        _ runID: UUID, project: String, revision: String, files: [String: [String]],
        lines: [String: [String: LineSet]] = [:], covers: [String: [String]] = [:]
    ) async throws {
        let rows = try await database.client.query(
            """
            SELECT DISTINCT a.scenario_id, e.method, e.host, split_part(e.url, '?', 1)
            FROM attempts a JOIN exchanges e ON e.attempt_id = a.id
            WHERE a.run_id = \(runID)
            """,
            logger: database.logger)
        var endpoints: [String: Set<String>] = [:]
        for try await (id, method, host, url) in rows.decode((String, String, String, String).self) {
            endpoints[id, default: []].insert(FailureSignature.endpoint(method: method, host: host, url: url))
        }
        for (id, called) in endpoints where called.count > Self.footprintEndpoints {
            endpoints[id] = [EndpointPattern.every]
        }
        let ids = files.keys.sorted()
        let encoder = JSONEncoder()
        func json(_ values: [String]) throws -> String { String(decoding: try encoder.encode(values), as: UTF8.self) }
        let fileLists = try ids.map { try json(files[$0] ?? []) }
        let endpointLists = try ids.map { try json((endpoints[$0] ?? []).sorted()) }
        let coverLists = try ids.map { try json(covers[$0] ?? []) }
        let lineLists = try ids.map { id in try json((files[id] ?? []).map { lines[id]?[$0]?.description ?? "" }) }
        try await database.withTransaction { connection in
            try await connection.query(
                """
                INSERT INTO footprints (project, scenario_id, revision, run_id, files, lines, endpoints, covers)
                SELECT \(project), f.id, \(revision), \(runID),
                       ARRAY(SELECT jsonb_array_elements_text(f.files::jsonb)),
                       ARRAY(SELECT jsonb_array_elements_text(f.lines::jsonb)),
                       ARRAY(SELECT jsonb_array_elements_text(f.endpoints::jsonb)),
                       ARRAY(SELECT jsonb_array_elements_text(f.covers::jsonb))
                FROM unnest(\(ids)::text[], \(fileLists)::text[], \(lineLists)::text[], \(endpointLists)::text[],
                            \(coverLists)::text[]) AS f(id, files, lines, endpoints, covers)
                ON CONFLICT (project, scenario_id, revision) DO UPDATE
                SET run_id = excluded.run_id, recorded_at = now(), files = excluded.files, lines = excluded.lines,
                    endpoints = excluded.endpoints, covers = excluded.covers
                """,
                logger: database.logger)
            // Each test's newest revisions only (the selection reads no more), and none past their days.
            try await connection.query(
                """
                DELETE FROM footprints f USING (
                    SELECT scenario_id, revision, row_number() OVER (PARTITION BY scenario_id ORDER BY recorded_at DESC) AS n
                    FROM footprints WHERE project = \(project) AND scenario_id = ANY(\(ids))) old
                WHERE f.project = \(project) AND f.scenario_id = old.scenario_id AND f.revision = old.revision
                  AND old.n > \(Self.footprintRevisions)
                """,
                logger: database.logger)
            try await connection.query(
                """
                DELETE FROM footprints WHERE recorded_at < now() - \(Self.footprintDays) * interval '1 day'
                """,
                logger: database.logger)
        }
    }

    /// The footprints of the given tests, newest first, up to ``footprintRevisions`` revisions each.
    package func footprints(_ scenarioIDs: [String], project: String) async throws -> [String: [Footprint]] {
        let rows = try await database.client.query(
            """
            SELECT scenario_id, revision, files, lines, endpoints, covers FROM (
                SELECT f.*, row_number() OVER (PARTITION BY f.scenario_id ORDER BY f.recorded_at DESC) AS n
                FROM footprints f WHERE f.project = \(project) AND f.scenario_id = ANY(\(scenarioIDs))) x
            WHERE n <= \(Self.footprintRevisions)
            ORDER BY scenario_id, recorded_at DESC
            """,
            logger: database.logger)
        var footprints: [String: [Footprint]] = [:]
        for try await (id, revision, files, lines, endpoints, covers) in rows.decode(
            (String, String, [String], [String], [String], [String]).self)
        {
            var ran: [String: LineSet] = [:]
            for (file, text) in zip(files, lines) where !text.isEmpty { ran[file] = LineSet(Substring(text)) }
            footprints[id, default: []].append(
                Footprint(revision: revision, files: files, endpoints: endpoints, covers: covers, lines: ran))
        }
        return footprints
    }

    /// Of the given tests, those planned in the project before (`known`), and those of which one of the last
    /// `attempts` finished attempts did not pass (`failing`: a failure, or a flaky pass, whatever run it was in).
    package func selectionHistory(
        _ scenarioIDs: [String], project: String, attempts: Int = 3
    ) async throws -> (known: Set<String>, failing: Set<String>) {
        async let knownRows = database.client.query(
            "SELECT id FROM scenarios WHERE project = \(project) AND id = ANY(\(scenarioIDs))", logger: database.logger)
        // Each test's newest finished attempts, from the history index (project, scenario, finished time).
        let failingRows = try await database.client.query(
            """
            SELECT ids.id FROM unnest(\(scenarioIDs)::text[]) AS ids(id)
            WHERE EXISTS (SELECT 1 FROM (SELECT a.outcome FROM attempts a
                                         WHERE a.project = \(project) AND a.scenario_id = ids.id AND a.outcome IS NOT NULL
                                         ORDER BY a.finished_at DESC LIMIT \(attempts)) last
                          WHERE last.outcome <> 'passed')
            """,
            logger: database.logger)
        var failing = Set<String>()
        for try await id in failingRows.decode(String.self) { failing.insert(id) }
        var known = Set<String>()
        for try await id in try await knownRows.decode(String.self) { known.insert(id) }
        return (known, failing)
    }

    /// What chose run `runID`'s tests, why it stopped early (when it did), and the tests it left out, in the suite's
    /// order.
    package func selection(_ runID: UUID) async throws -> (String?, String?, [RunReport.Skipped]) {
        var selection: String?
        var stopped: String?
        for try await (value, reason) in try await database.client.query(
            "SELECT selection, stop_reason FROM runs WHERE id = \(runID)", logger: database.logger
        ).decode((String?, String?).self) {
            (selection, stopped) = (value, reason)
        }
        let rows = try await database.client.query(
            """
            SELECT scenario_id, name, uri, runner, reason, expected_ms FROM run_skips WHERE run_id = \(runID)
            ORDER BY position
            """,
            logger: database.logger)
        var skipped: [RunReport.Skipped] = []
        for try await (id, name, uri, runner, reason, expected) in rows.decode(
            (String, String, String?, Bool, String, Int64?).self)
        {
            skipped.append(
                RunReport.Skipped(
                    id: id, name: name, uri: uri, runnerTest: runner, reason: reason, expectedMilliseconds: expected))
        }
        return (selection, stopped, skipped)
    }
}

extension RunStore {
    /// Adds to run `runID` one coverage report (the one attempt `report` kept): the lines of each source file each
    /// context ran, the empty context's (what ran outside any test, and what was only measured) once for the report.
    package func saveCoverage(_ runID: UUID, report: Int64, _ ran: [String: [String: LineSet]]) async throws {
        var contexts: [String] = [], files: [String] = [], lines: [String] = []
        for (context, ranFiles) in ran {
            for (file, ranLines) in ranFiles {
                contexts.append(context)
                files.append(file)
                lines.append(ranLines.description)
            }
        }
        guard !contexts.isEmpty else { return }
        try await database.client.query(
            """
            INSERT INTO test_coverage (run_id, report, context, file, lines)
            SELECT \(runID), \(report), c.context, c.file, c.lines
            FROM unnest(\(contexts)::text[], \(files)::text[], \(lines)::text[]) AS c(context, file, lines)
            ON CONFLICT (run_id, report, context, file) DO UPDATE SET lines = excluded.lines
            """,
            logger: database.logger)
    }

    /// Run `runID`'s coverage goes once its footprints are recorded (or could not be: a revision with changes).
    package func dropCoverage(_ runID: UUID) async throws {
        try await database.client.query("DELETE FROM test_coverage WHERE run_id = \(runID)", logger: database.logger)
    }

    /// Run `runID`'s coverage reports, by report: the lines of each source file each context ran (the empty
    /// context's: what every test of the report ran before it, and what it only measured).
    package func coverage(_ runID: UUID) async throws -> [Int64: [String: [String: LineSet]]] {
        let rows = try await database.client.query(
            "SELECT report, context, file, lines FROM test_coverage WHERE run_id = \(runID)", logger: database.logger)
        var reports: [Int64: [String: [String: LineSet]]] = [:]
        for try await (report, context, file, lines) in rows.decode((Int64, String, String, String).self) {
            reports[report, default: [:]][context, default: [:]][file] = LineSet(Substring(lines))
        }
        return reports
    }
}
