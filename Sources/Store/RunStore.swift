import Foundation
import Logging
import OrchestrateModel
import PostgresNIO

/// A new run, as the coordinator plans it.
package struct RunPlan: Sendable {
    package var id: UUID
    package var host: String
    package var gitRevision: String?
    package var workingDirectory: String
    package var configPath: String?
    package var mode: Mode
    package var workers: Int
    package var retries: Int
    package var scenarios: [Scenario]
    /// The key nodes join the run under (`run --join KEY`): unique, so that exactly one node plans it.
    package var joinKey: String?
    /// For a node's re-run: the run it re-runs a share of, and the node.
    package var parentRunID: UUID?
    package var node: String?
    /// The suite the run belongs to (`project:` in orchestrate.yml): its scenarios' history, flakiness and quarantine
    /// are the project's.
    package var project = RunStore.defaultProject
    /// The branch it ran on, when known.
    package var branch: String?
    /// Which failures its retries are for: every host that works the run goes by it.
    package var retryWhen = RetryWhen.any
    /// What chose its tests (`changed since main (3 files)`), when a selection left some out.
    package var selection: String?
    /// The tests the selection left out, in the suite's order, and those of them it runs as a sample.
    package var skips: [RunReport.Skipped] = []
    package var sampled: Set<String> = []
    /// The tests claimed before the others (`run --order likely-failing`); each group longest first.
    package var first: Set<String> = []
    /// Every host stops the run after this many genuine failures (`run --fail-fast N`).
    package var failFast: Int?
    /// The expected durations the planner read already (`nil` inside: never seen passing), which the run's rows take
    /// as they are; the others are read from history as the run is stored.
    package var expected: [String: Int64?] = [:]

    package init(
        id: UUID = UUID(), host: String, gitRevision: String?, workingDirectory: String, configPath: String?,
        mode: Mode, workers: Int, retries: Int, scenarios: [Scenario]
    ) {
        self.id = id
        self.host = host
        self.gitRevision = gitRevision
        self.workingDirectory = workingDirectory
        self.configPath = configPath
        self.mode = mode
        self.workers = workers
        self.retries = retries
        self.scenarios = scenarios
    }
}

/// A stored run, as listings show it.
package struct RunSummary: Sendable, Hashable {
    package var id: UUID
    package var state: RunState
    package var createdAt: Date
    package var finishedAt: Date?
    package var host: String
    package var gitRevision: String?
    package var workingDirectory: String
    package var mode: String
    package var workers: Int
    package var retries: Int
    package var scenarios: Int
    package var passed: Int
    package var flaky: Int
    package var failed: Int
    package var pending: Int
    /// The hosts whose processes worked it (CI nodes, agents), and their slots together.
    package var hosts: [String] = []
    package var slots = 0
    /// The key it was planned under, for a run several nodes joined.
    package var joinKey: String?
    package var project = RunStore.defaultProject
    package var branch: String?
}

/// Runs, scenarios and their history.
package struct RunStore: Sendable {
    let database: Database
    /// The project of runs planned without one (`project:` in orchestrate.yml names it; the config's folder otherwise).
    package static let defaultProject = "default"

    package init(database: Database) {
        self.database = database
    }

    /// Stores the run, its scenarios (with expected durations from history) and their first attempts, in one statement.
    /// The attempts are numbered in the listed order, so scenarios with the same expectation (never seen, say) are
    /// claimed in that order. Returns when the run started (its frozen "now") and the expected durations (`nil` for
    /// never-seen scenarios), as ``unsettled(_:)`` would.
    @discardableResult
    package func create(_ plan: RunPlan) async throws -> (startedAt: Date, expected: [String: Int64?]) {
        guard let created = try await createUnlessJoined(plan) else {
            throw StoreError(.badConfiguration, "a run under the join key \(plan.joinKey ?? "") exists already")
        }
        return created
    }

    /// As ``create(_:)``, except that a plan with a join key under which a run exists already stores nothing and
    /// returns `nil`: of the nodes that arrive at once, exactly one plans the run (the unique index on the key decides,
    /// in the one statement).
    package func createUnlessJoined(_ plan: RunPlan) async throws -> (startedAt: Date, expected: [String: Int64?])? {
        // One statement, the scenarios as parallel arrays (PostgreSQL reads a binary array much faster than the same
        // rows as JSON). A scenario's tags are a slice of one array of all tags (an empty slice, `[n + 1 : n]`, is
        // `{}`); absent uri and line travel as '' and 0.
        var ids: [String] = [], names: [String] = [], commands: [String] = [], uris: [String] = [], lines: [Int32] = []
        var tagFroms: [Int32] = [], tagEnds: [Int32] = [], tags: [String] = [], timeouts: [Int64] = [],
            environments: [String] = []
        // Results formats and batches travel as '' when absent; a suite's batch is one JSON text, encoded once.
        var results: [String] = [], batches: [String] = [], sampled: [Bool] = []
        // A rank per scenario, by position, when some go first (none: every rank is 0).
        var ranks: [Int32] = []
        var known: [Int64] = []
        var encodedBatches: [Batch: String] = [:]
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        for scenario in plan.scenarios {
            ids.append(scenario.id)
            names.append(scenario.name)
            commands.append(scenario.command)
            uris.append(scenario.uri ?? "")
            lines.append(Int32(clamping: scenario.line ?? 0))
            tagFroms.append(Int32(tags.count + 1))
            tags += scenario.tags
            tagEnds.append(Int32(tags.count))
            timeouts.append(scenario.timeoutMilliseconds)
            environments.append(Self.jsonObject(scenario.environment))
            results.append(scenario.results?.rawValue ?? "")
            sampled.append(plan.sampled.contains(scenario.id))
            if !plan.first.isEmpty { ranks.append(plan.first.contains(scenario.id) ? 1 : 0) }
            // -2: not read yet; -1: read, never seen passing.
            known.append(plan.expected[scenario.id].map { $0 ?? -1 } ?? -2)
            if let batch = scenario.batch {
                if encodedBatches[batch] == nil {
                    encodedBatches[batch] = String(decoding: try encoder.encode(batch), as: UTF8.self)
                }
                batches.append(encodedBatches[batch]!)
            } else {
                batches.append("")
            }
        }
        let lanes = plan.mode == .compare ? [Mode.replay.rawValue, Mode.live.rawValue] : [""]
        let rows = try await database.client.query(
            """
            WITH x AS (
                SELECT u.id, u.name, u.command, nullif(u.uri, '') AS uri, nullif(u.line, 0) AS line,
                       (\(tags)::text[])[u.tag_from : u.tag_end] AS tags,
                       u.timeout_ms, u.env::jsonb AS env, u.position::integer - 1 AS position, \(plan.project)::text AS project,
                       nullif(u.results, '') AS results, nullif(u.batch, '')::jsonb AS batch, u.sampled, u.known
                FROM unnest(\(ids)::text[], \(names)::text[], \(commands)::text[], \(uris)::text[], \(lines)::integer[],
                            \(tagFroms)::integer[], \(tagEnds)::integer[], \(timeouts)::bigint[], \(environments)::text[],
                            \(results)::text[], \(batches)::text[], \(sampled)::boolean[], \(known)::bigint[])
                     WITH ORDINALITY AS u(id, name, command, uri, line, tag_from, tag_end, timeout_ms, env, results, batch, sampled,
                                          known, position)
            ), run AS (
                INSERT INTO runs (id, state, host, git_revision, working_directory, config_path, mode, workers, retries, scenario_count,
                                  join_key, parent_run_id, node, project, branch, retry_when, selection, fail_fast)
                VALUES (\(plan.id), 'running', \(plan.host), \(plan.gitRevision), \(plan.workingDirectory), \(plan.configPath),
                        \(plan.mode.rawValue), \(plan.workers), \(plan.retries), \(plan.scenarios.count), \(plan.joinKey),
                        \(plan.parentRunID), \(plan.node), \(plan.project), \(plan.branch), \(plan.retryWhen.rawValue),
                        \(plan.selection), \(plan.failFast))
                ON CONFLICT (join_key) WHERE join_key IS NOT NULL DO NOTHING
                RETURNING created_at
            ), known AS (
                -- Unchanged scenarios are left alone, not even locked (a new row version each, every run, cost more than
                -- the insert); last_seen says the day a scenario was last planned.
                INSERT INTO scenarios (project, id, name, uri, line, tags)
                SELECT x.project, x.id, x.name, x.uri, x.line, x.tags FROM x
                WHERE EXISTS (SELECT 1 FROM run) AND NOT EXISTS (SELECT 1 FROM scenarios s WHERE s.project = x.project AND s.id = x.id
                                    AND s.last_seen >= now() - interval '1 day'
                                    AND (s.name, s.uri, s.line, s.tags) IS NOT DISTINCT FROM (x.name, x.uri, x.line, x.tags))
                ON CONFLICT (project, id) DO UPDATE SET name = excluded.name, uri = excluded.uri, line = excluded.line,
                    tags = excluded.tags, last_seen = now()
            ), planned AS (
                -- The first attempts come from the rows just planned; a compare run's lanes (the replay and the live
                -- attempt of a scenario) are claimed one after the other.
                INSERT INTO run_scenarios (run_id, project, scenario_id, position, command, timeout_ms, env, tags, expected_ms,
                                           max_attempts, lane_count, quarantined, results, batch, sampled)
                -- The median per row, never as a join: PostgreSQL cannot know how many rows an unnest has, and joining
                -- two guesses of 10 made a nested loop over 2,000 x 2,000 rows. One the planner read is not read again.
                SELECT \(plan.id), x.project, x.id, x.position, x.command, x.timeout_ms, x.env, x.tags,
                       CASE WHEN x.known = -2 THEN \(unescaped: RunStore.medianSQL("x.id", project: "x.project"))
                            ELSE nullif(x.known, -1) END,
                       \(plan.retries + 1), cardinality(\(lanes)::text[]),
                       EXISTS (SELECT 1 FROM quarantine q WHERE q.project = x.project AND q.scenario_id = x.id
                                      AND (q.until IS NULL OR q.until >= \(unescaped: RunStore.todaySQL))),
                       x.results, x.batch, x.sampled
                FROM x WHERE EXISTS (SELECT 1 FROM run)
                RETURNING scenario_id, position, expected_ms
            ), first AS (
                INSERT INTO attempts (run_id, project, scenario_id, attempt, mode, expected_ms, rank)
                SELECT \(plan.id), \(plan.project), p.scenario_id, 1, nullif(lane.mode, ''), p.expected_ms,
                       coalesce((\(ranks)::integer[])[p.position + 1], 0)::smallint
                FROM planned p, unnest(\(lanes)::text[]) WITH ORDINALITY AS lane(mode, n)
                ORDER BY p.position, lane.n
            ), skipped AS (
                INSERT INTO run_skips (run_id, scenario_id, name, uri, runner, reason, expected_ms, position)
                SELECT \(plan.id), k.id, k.name, nullif(k.uri, ''), k.runner, k.reason, nullif(k.expected_ms, -1), k.position::integer
                FROM unnest(\(plan.skips.map(\.id))::text[], \(plan.skips.map(\.name))::text[], \(plan.skips.map { $0.uri ?? "" })::text[],
                            \(plan.skips.map(\.runnerTest))::boolean[], \(plan.skips.map(\.reason))::text[],
                            \(plan.skips.map { $0.expectedMilliseconds ?? -1 })::bigint[])
                     WITH ORDINALITY AS k(id, name, uri, runner, reason, expected_ms, position)
                WHERE EXISTS (SELECT 1 FROM run)
            )
            SELECT (SELECT created_at FROM run), (SELECT array_agg(scenario_id) FROM planned),
                   (SELECT array_agg(coalesce(expected_ms, -1)) FROM planned)
            """,
            logger: database.logger
        )
        for try await (startedAt, ids, expected) in rows.decode((Date?, [String]?, [Int64]?).self) {
            guard let startedAt else { return nil }
            let expected = (expected ?? []).map { $0 < 0 ? nil : $0 }
            return (startedAt, Dictionary(zip(ids ?? [], expected), uniquingKeysWith: { first, _ in first }))
        }
        throw StoreError(.unknownRun, "planning run \(plan.id.uuidString.lowercased()) returned nothing")
    }

    /// A scenario as a run planned it: `run_scenarios rs` (command, limits, environment, tags) joined with
    /// `scenarios s` (name and place), as ``plannedScenario(_:decoder:batches:)`` reads them.
    static let plannedScenarioColumns = """
        rs.scenario_id, s.name, rs.command, rs.tags, rs.timeout_ms, rs.env::text AS env, s.uri, s.line, rs.results, \
        rs.batch::text AS batch
        """

    /// The scenario in a row with ``plannedScenarioColumns``; most have no environment of their own and skip the
    /// decoder, and the tests of a batched suite share one batch, decoded once (`batches`, by its JSON text).
    static func plannedScenario(
        _ column: NamedColumns, decoder: JSONDecoder, batches: inout [String: Batch]
    ) throws -> Scenario {
        let environmentText: String = try column("env")
        let environment =
            environmentText == "{}"
            ? [:] : (try? decoder.decode([String: String].self, from: Data(environmentText.utf8))) ?? [:]
        var batch: Batch?
        if let text = try column("batch", as: String?.self) {
            batch = batches[text] ?? (try? decoder.decode(Batch.self, from: Data(text.utf8)))
            batches[text] = batch
        }
        return Scenario(
            id: try column("scenario_id"), name: try column("name"), command: try column("command"),
            tags: try column("tags"),
            timeoutMilliseconds: try column("timeout_ms"), environment: environment, uri: try column("uri"),
            line: try column("line"),
            results: try column("results", as: String?.self).flatMap(ResultsFormat.init(rawValue:)),
            batch: batch)
    }

    /// A JSON object of strings, written directly (one per planned scenario; most are `{}`).
    static func jsonObject(_ values: [String: String]) -> String {
        guard !values.isEmpty else { return "{}" }
        return "{"
            + values.sorted { $0.key < $1.key }.map {
                "\"\(JSONValue.escaped($0.key))\":\"\(JSONValue.escaped($0.value))\""
            }
            .joined(separator: ",") + "}"
    }

    /// A run of one scenario whose single attempt is running now, for work outside the queue
    /// (`orchestrate mock serve`): its exchanges need an attempt to belong to. Returns the attempt's id.
    package func createRunning(_ plan: RunPlan) async throws -> Int64 {
        try await create(plan)
        let rows = try await database.client.query(
            """
            UPDATE attempts SET state = 'running', started_at = now(), host = \(plan.host)
            WHERE run_id = \(plan.id) RETURNING id
            """,
            logger: database.logger
        )
        for try await id in rows.decode(Int64.self) { return id }
        throw StoreError(.unknownRun, "run \(plan.id.uuidString.lowercased()) has no attempt")
    }

    /// Ends what ``createRunning(_:)`` started: the attempt passed, the run finished.
    package func finishRunning(_ runID: UUID, attemptID: Int64) async throws {
        try await database.withTransaction { connection in
            try await connection.query(
                """
                UPDATE attempts SET state = 'finished', outcome = 'passed', finished_at = now(),
                    duration_ms = (extract(epoch FROM now() - started_at) * 1000)::bigint
                WHERE id = \(attemptID)
                """,
                logger: database.logger
            )
            try await connection.query(
                "UPDATE runs SET state = 'finished', finished_at = now() WHERE id = \(runID)", logger: database.logger)
        }
    }

    /// Expected durations (median of recent passing attempts) for the given scenarios of `project`; absent when never
    /// seen.
    package func expectedDurations(_ scenarioIDs: [String], project: String) async throws -> [String: Int64] {
        var result: [String: Int64] = [:]
        let query = PostgresQuery(
            unsafeSQL: RunStore.expectedSQL("SELECT unnest($1::text[])", project: "$2::text"),
            binds: {
                var binds = PostgresBindings()
                binds.append(scenarioIDs)
                binds.append(project)
                return binds
            }())
        for try await (id, expected) in try await database.client.query(query, logger: database.logger).decode(
            (String, Int64).self)
        {
            result[id] = expected
        }
        return result
    }

    /// The last finished attempt's time of each scenario of `scenarioIDs` that has one (passed or not): what a scenario
    /// never seen passing took.
    package func lastDurations(_ scenarioIDs: [String], project: String) async throws -> [String: Int64] {
        let rows = try await database.client.query(
            """
            SELECT ids.id, last.duration_ms
            FROM unnest(\(scenarioIDs)::text[]) AS ids(id),
                 LATERAL (SELECT a.duration_ms FROM attempts a
                          WHERE a.project = \(project) AND a.scenario_id = ids.id AND a.outcome IS NOT NULL
                          ORDER BY a.finished_at DESC LIMIT 1) last
            WHERE last.duration_ms IS NOT NULL
            """, logger: database.logger)
        var result: [String: Int64] = [:]
        for try await (id, milliseconds) in rows.decode((String, Int64).self) { result[id] = milliseconds }
        return result
    }

    /// What each batch command's runner costs per process in `project`, from its 100 newest processes, those on
    /// `host` first (machines differ): the median start-up of the newest 20; and, of the newest 5 runs, from the run
    /// whose processes took least per test beyond their start-up, that time per test and how many tests they ran at
    /// once. The least, because processes that crowd the processors (a run of many) take longer for the same tests,
    /// which would keep the next run as crowded. Absent when none was measured. Only the newest 5 runs' processes have
    /// their tests counted: a process of a batch of 900 tests has 900 attempts to count.
    package func runnerCosts(of commands: [String], project: String, host: String) async throws -> [String: RunnerCost]
    {
        let rows = try await database.client.query(
            """
            WITH processes AS (
                SELECT c.command, h.*
                FROM unnest(\(commands)::text[]) AS c(command),
                     LATERAL (SELECT a.run_id, a.pid, a.host, a.finished_at, a.startup_ms, a.process_ms,
                                     a.host IS NOT DISTINCT FROM \(host) AS here
                              FROM attempts a
                              JOIN run_scenarios rs ON rs.run_id = a.run_id AND rs.scenario_id = a.scenario_id
                              WHERE a.project = \(project) AND a.startup_ms IS NOT NULL AND a.process_ms IS NOT NULL
                                AND a.finished_at > now() - interval '30 days' AND rs.batch->>'command' = c.command
                              ORDER BY here DESC, a.finished_at DESC LIMIT 100) h
            ), startups AS (
                SELECT command, (percentile_cont(0.5) WITHIN GROUP (ORDER BY startup_ms))::bigint AS startup
                FROM (SELECT command, startup_ms,
                             row_number() OVER (PARTITION BY command ORDER BY here DESC, finished_at DESC) AS n
                      FROM processes) newest
                WHERE n <= 20 GROUP BY command
            ), newest_runs AS (
                SELECT command, run_id
                FROM (SELECT command, run_id,
                             row_number() OVER (PARTITION BY command ORDER BY bool_or(here) DESC, max(finished_at) DESC) AS n
                      FROM processes GROUP BY command, run_id) ranked
                WHERE n <= 5
            ), counted AS MATERIALIZED (
                -- The newest runs' processes first, then their tests counted: each counts among its run's attempts, and
                -- a plan that counted before it joined would count every process's.
                SELECT p.* FROM processes p JOIN newest_runs n ON n.command = p.command AND n.run_id = p.run_id
            ), runs AS (
                SELECT p.command, sum(p.process_ms - p.startup_ms)::float8 / nullif(sum(t.tests), 0) AS per_test,
                       sum(t.test_ms)::float8 / nullif(sum(p.process_ms - p.startup_ms), 0) AS concurrency
                FROM counted p
                CROSS JOIN LATERAL (
                    SELECT count(*) AS tests, sum(o.duration_ms) AS test_ms FROM attempts o
                    WHERE o.run_id = p.run_id AND o.pid = p.pid AND o.host IS NOT DISTINCT FROM p.host
                      AND o.state = 'finished') t
                GROUP BY p.command, p.run_id
            )
            SELECT s.command, s.startup, best.per_test, best.concurrency
            FROM startups s
            LEFT JOIN LATERAL (SELECT r.per_test, r.concurrency FROM runs r
                               WHERE r.command = s.command AND r.per_test IS NOT NULL
                               ORDER BY r.per_test LIMIT 1) best ON true
            """,
            logger: database.logger)
        var result: [String: RunnerCost] = [:]
        for try await (command, startup, perTest, concurrency) in rows.decode((String, Int64, Double?, Double?).self) {
            result[command] = RunnerCost(startup: startup, perTest: perTest, concurrency: concurrency)
        }
        return result
    }

    /// The planner's estimate for the scenarios `ids` selects: the median of each one's last 20 passing attempts (rows
    /// `scenario_id, ms`); scenarios never seen passing have no row and run first. Each scenario reads only its 20
    /// newest passes (from the index `attempts_scenario_history` alone), however long the history. The median is taken
    /// once per scenario: without `OFFSET 0` the planner pulls the subquery up into both the filter and the output.
    static func expectedSQL(_ ids: String, project: String) -> String {
        """
        SELECT ids.id AS scenario_id, recent.ms
        FROM (\(ids)) AS ids(id), LATERAL (SELECT \(medianSQL("ids.id", project: project)) AS ms OFFSET 0) recent
        WHERE recent.ms IS NOT NULL
        """
    }

    /// The median of the last 20 passing durations of the scenario `id` names in `project` (SQL expressions), as a
    /// scalar subquery (`NULL` when none).
    static func medianSQL(_ id: String, project: String) -> String {
        """
        (SELECT (percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms))::bigint
         FROM (SELECT duration_ms FROM attempts a WHERE a.project = \(project) AND a.scenario_id = \(id) AND a.outcome = 'passed'
               ORDER BY a.finished_at DESC LIMIT 20) last20)
        """
    }

    /// What is left to run: the unsettled scenarios with their expected durations (`nil` when never
    /// seen), and when the run started (its frozen "now"); `nil` when the id is unknown.
    package func unsettled(_ runID: UUID) async throws -> (startedAt: Date, expected: [String: Int64?])? {
        let rows = try await database.client.query(
            """
            SELECT r.created_at, rs.scenario_id, rs.expected_ms
            FROM runs r LEFT JOIN run_scenarios rs ON rs.run_id = r.id AND rs.result IS NULL
            WHERE r.id = \(runID)
            """,
            logger: database.logger
        )
        var startedAt: Date?
        var expected: [String: Int64?] = [:]
        for try await (created, scenarioID, ms) in rows.decode((Date, String?, Int64?).self) {
            startedAt = created
            if let scenarioID { expected[scenarioID] = ms }
        }
        return startedAt.map { ($0, expected) }
    }

    package func setState(_ runID: UUID, _ state: RunState) async throws {
        try await database.client.query(
            """
            UPDATE runs SET state = \(state.rawValue),
                finished_at = CASE WHEN \(state == .running) THEN NULL ELSE now() END
            WHERE id = \(runID)
            """,
            logger: database.logger
        )
    }

    /// One run's listing; `nil` when the id is unknown.
    package func summary(_ runID: UUID) async throws -> RunSummary? {
        try await summaries(where: runID, limit: 1).first
    }

    /// The most recent runs, newest first.
    package func recent(limit: Int) async throws -> [RunSummary] {
        try await summaries(where: nil, limit: limit)
    }

    private func summaries(where runID: UUID?, limit: Int) async throws -> [RunSummary] {
        let rows = try await database.client.query(
            """
            SELECT r.id, r.state, r.created_at, r.finished_at, r.host, r.git_revision, r.working_directory, r.mode,
                   r.workers, r.retries, r.scenario_count, c.passed, c.flaky, c.failed, c.pending, r.join_key,
                   (SELECT coalesce(array_agg(DISTINCT m.host ORDER BY m.host), '{}') FROM run_members m WHERE m.run_id = r.id)
                       AS hosts,
                   (SELECT coalesce(sum(m.workers), 0)::bigint FROM run_members m WHERE m.run_id = r.id) AS slots,
                   r.project, r.branch
            FROM (SELECT * FROM runs WHERE \(runID)::uuid IS NULL OR id = \(runID) ORDER BY created_at DESC LIMIT \(limit)) r,
            LATERAL (SELECT count(*) FILTER (WHERE rs.result = 'passed') AS passed, count(*) FILTER (WHERE rs.result = 'flaky') AS flaky,
                            count(*) FILTER (WHERE rs.result = 'failed') AS failed, count(*) FILTER (WHERE rs.result IS NULL) AS pending
                     FROM run_scenarios rs WHERE rs.run_id = r.id) c
            ORDER BY r.created_at DESC
            """,
            logger: database.logger
        )
        var result: [RunSummary] = []
        for try await row in rows {
            let column = NamedColumns(row)
            result.append(
                RunSummary(
                    id: try column("id"), state: RunState(rawValue: try column("state")) ?? .running,
                    createdAt: try column("created_at"), finishedAt: try column("finished_at"),
                    host: try column("host"),
                    gitRevision: try column("git_revision"), workingDirectory: try column("working_directory"),
                    mode: try column("mode"), workers: try column("workers"), retries: try column("retries"),
                    scenarios: try column("scenario_count"), passed: try column("passed"), flaky: try column("flaky"),
                    failed: try column("failed"), pending: try column("pending"), hosts: try column("hosts"),
                    slots: Int(try column("slots", as: Int64.self)), joinKey: try column("join_key"),
                    project: try column("project"), branch: try column("branch")
                ))
        }
        return result
    }

    /// A run's attempts (of one scenario, when given), by scenario, lane and number.
    package func attemptRecords(_ runID: UUID, scenarioID: String? = nil) async throws -> [AttemptRecord] {
        let rows = try await database.client.query(
            """
            SELECT scenario_id, attempt, state, outcome, exit_code, signal, worker, started_at, finished_at, duration_ms,
                   stdout, stderr, error, id, mode, retry_evidence, incident, signature
            FROM attempts WHERE run_id = \(runID) AND (\(scenarioID)::text IS NULL OR scenario_id = \(scenarioID)) AND state <> 'abandoned'
            ORDER BY scenario_id, mode NULLS FIRST, attempt
            """,
            logger: database.logger
        )
        var records: [AttemptRecord] = []
        for try await row in rows {
            let column = NamedColumns(row)
            var record =
                AttemptRecord(
                    id: try column("id"), runID: runID, scenarioID: try column("scenario_id"),
                    attempt: try column("attempt"),
                    lane: try column("mode", as: String?.self).flatMap(Mode.init(rawValue:)),
                    state: AttemptState(rawValue: try column("state")) ?? .queued,
                    outcome: try column("outcome", as: String?.self).flatMap(Outcome.init(rawValue:)),
                    exitCode: try column("exit_code"), signal: try column("signal"), worker: try column("worker"),
                    startedAt: try column("started_at"), finishedAt: try column("finished_at"),
                    durationMilliseconds: try column("duration_ms"), stdout: try column("stdout"),
                    stderr: try column("stderr"), error: try column("error")
                )
            record.evidence = try column("retry_evidence")
            record.incident = try column("incident")
            record.signature = try column("signature")
            records.append(record)
        }
        return records
    }

    /// The run with every scenario and attempt, in plan order, and its incidents. `planned`: the scenarios as the caller
    /// planned and stored them (what a scenario is, beside what became of it in the run), so that only what the run
    /// made of them is read; a scenario it does not hold is read whole, as are all without it.
    package func report(_ runID: UUID, planned: [Scenario]? = nil) async throws -> RunReport {
        // The attempts and the scenarios' entries, the large reads, go side by side with the run's other reads, which
        // follow one another: each read at once would open a connection of its own at the end of every run, a handshake
        // that costs both sides more CPU than the read.
        async let attemptsRead = attemptRecords(runID)
        async let runRead = (
            summary: try await summary(runID), traffic: try await mockTraffic(runID),
            incidents: try await incidents(runID), selection: try await selection(runID)
        )
        let known = planned.map { Dictionary($0.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first }) }
        var read = try await scenarioEntries(runID, known: known)
        // Read whole, every row is an entry.
        if read == nil { read = try await scenarioEntries(runID) }
        let rows = read ?? []
        let run = try await runRead
        guard let summary = run.summary else {
            throw StoreError(.unknownRun, "no run \(runID) in the database")
        }
        let attempts = Dictionary(grouping: try await attemptsRead, by: \.scenarioID)
        let entries = rows.map { entry in
            var entry = entry
            entry.attempts = attempts[entry.scenario.id] ?? []
            return entry
        }
        var report = RunReport(
            runID: runID, state: summary.state, startedAt: summary.createdAt, finishedAt: summary.finishedAt,
            host: summary.host, gitRevision: summary.gitRevision, mode: Mode(rawValue: summary.mode) ?? .replay,
            scenarios: entries
        )
        report.mockTraffic = run.traffic
        report.incidents = run.incidents
        (report.selection, report.stopReason, report.skipped) = run.selection
        return report
    }

    /// What became of the run's scenarios, in plan order: each read whole (``plannedScenarioColumns``), or, with
    /// `known`, taken from it as planned; `nil` when `known` does not hold one of them.
    private func scenarioEntries(
        _ runID: UUID, known: [String: Scenario]? = nil
    ) async throws -> [RunReport.ScenarioEntry]? {
        let (scenarioColumns, join) =
            known == nil
            ? (Self.plannedScenarioColumns, "JOIN scenarios s ON s.project = rs.project AND s.id = rs.scenario_id")
            : ("rs.scenario_id", "")
        let rows = try await database.client.query(
            """
            SELECT \(unescaped: scenarioColumns), \(unescaped: Self.scenarioEntryColumns)
            FROM run_scenarios rs \(unescaped: join)
            WHERE rs.run_id = \(runID) ORDER BY rs.position
            """,
            logger: database.logger
        )
        // Most scenarios have no evidence: those skip the decoder.
        let decoder = JSONDecoder()
        var batches: [String: Batch] = [:]
        var entries: [RunReport.ScenarioEntry] = []
        var complete = true
        for try await row in rows {
            let column = NamedColumns(row)
            let scenario: Scenario
            if let known {
                // The rest of the rows are read to the end, for the connection's sake.
                guard complete, let planned = known[try column("scenario_id", as: String.self)] else {
                    complete = false
                    continue
                }
                scenario = planned
            } else {
                scenario = try Self.plannedScenario(column, decoder: decoder, batches: &batches)
            }
            entries.append(try Self.scenarioEntry(scenario, column, decoder: decoder))
        }
        return complete ? entries : nil
    }

    /// What a run made of a scenario, beside the scenario itself (``scenarioEntry(_:_:decoder:)``).
    private static let scenarioEntryColumns = """
        rs.result, rs.verdict, rs.verdict_reason, rs.evidence::text AS evidence, rs.quarantined, rs.expected_ms, \
        rs.sampled
        """

    /// The report's entry of `scenario` from a row with ``scenarioEntryColumns``, its attempts still to add.
    private static func scenarioEntry(
        _ scenario: Scenario, _ column: NamedColumns, decoder: JSONDecoder
    ) throws -> RunReport.ScenarioEntry {
        let evidence: String = try column("evidence")
        var entry = RunReport.ScenarioEntry(
            scenario: scenario,
            result: try column("result", as: String?.self).flatMap(ScenarioResult.init(rawValue:)) ?? .pending,
            attempts: [], verdict: try column("verdict", as: String?.self).flatMap(Verdict.init(rawValue:)),
            verdictReason: try column("verdict_reason"),
            evidence: evidence == "[]"
                ? [] : (try? decoder.decode([NetworkDifference].self, from: Data(evidence.utf8))) ?? [],
            quarantined: try column("quarantined")
        )
        entry.expectedMilliseconds = try column("expected_ms")
        entry.sampled = try column("sampled")
        return entry
    }

    /// Whether any attempt of the run made an exchange (a compare run is about its backends, whatever they did). An
    /// abandoned attempt (taken back from a lost host, given back at a stop, requeued to run alone) counts as it does in
    /// the report: not at all.
    package func mockTraffic(_ runID: UUID) async throws -> Bool {
        let rows = try await database.client.query(
            """
            -- The run's attempts, each asked for its first exchange: both in the order of an index, so that each is
            -- read by its index (a scan of the table would have to sort it all first). Joined, or asked with EXISTS,
            -- the planner read the table from its start, expecting to meet one of the run's early: for a run that made
            -- no exchange, which is what is asked, it read every exchange (or attempt) of every run.
            SELECT r.mode = 'compare' OR (
                SELECT true FROM attempts a
                WHERE a.run_id = r.id AND a.state <> 'abandoned'
                  AND (SELECT e.sequence FROM exchanges e WHERE e.attempt_id = a.id ORDER BY e.sequence LIMIT 1) IS NOT NULL
                ORDER BY a.scenario_id, coalesce(a.mode, ''), a.attempt
                LIMIT 1) IS NOT NULL
            FROM runs r WHERE r.id = \(runID)
            """, logger: database.logger)
        for try await traffic in rows.decode(Bool.self) { return traffic }
        return false
    }

    /// The last `limit` attempts of each of the run's scenarios in its project that finished before the run was
    /// planned, oldest first: the report's trend per scenario before the run's own attempts, which
    /// ``TrendPoint/trends(earlier:adding:length:)`` adds. Read while the run works, from the index that the planner's
    /// median reads (one short range of it per scenario, aggregated there).
    package func earlierTrends(_ runID: UUID, limit: Int = TrendPoint.length) async throws -> [String: [TrendPoint]] {
        let rows = try await database.client.query(
            """
            SELECT rs.scenario_id, t.passes, t.ms
            FROM run_scenarios rs JOIN runs r ON r.id = rs.run_id,
            LATERAL (SELECT array_agg(x.passed ORDER BY x.finished_at) AS passes, array_agg(x.ms ORDER BY x.finished_at) AS ms
                     FROM (SELECT a.outcome = 'passed' AS passed, coalesce(a.duration_ms, 0) AS ms, a.finished_at
                           FROM attempts a WHERE a.project = rs.project AND a.scenario_id = rs.scenario_id AND a.outcome IS NOT NULL
                             AND a.finished_at < r.created_at
                           ORDER BY a.finished_at DESC LIMIT \(limit)) x) t
            WHERE rs.run_id = \(runID) AND t.passes IS NOT NULL
            """,
            logger: database.logger)
        var trends: [String: [TrendPoint]] = [:]
        for try await (id, passes, milliseconds) in rows.decode((String, [Bool], [Int64]).self) {
            trends[id] = zip(passes, milliseconds).map { TrendPoint(passed: $0, milliseconds: $1) }
        }
        return trends
    }
}
