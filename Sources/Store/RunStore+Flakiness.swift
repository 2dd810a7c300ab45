import Foundation
import OrchestrateModel
import PostgresNIO

/// A scenario's flakiness over a window: `orchestrate flaky`, and automatic quarantine.
package struct FlakinessLine: Sendable, Encodable {
    package var scenarioID: String
    package var name: String
    /// ``FlakinessScore``: `(flips + 1) / (transitions + 10)`.
    package var score: Double
    package var attempts: Int
    package var passed: Int
    /// Attempts and passes by kind of backend (`replay`: replay, mock, hybrid; `live`: live, record); only kinds the
    /// scenario ran against in the window.
    package var lanes: [String: PassTally]
    /// Consecutive outcome pairs on the same git revision and kind of backend, and how many of them differ.
    package var transitions: Int
    package var flips: Int
    /// Verdicts of the scenario's runs in the window, by verdict.
    package var verdicts: [Verdict: Int]
    package var lastVerdict: Verdict?
    package var lastReason: String?
    /// The first network difference of the newest run that had any.
    package var lastEvidence: NetworkDifference?
    package var quarantined: Bool
}

/// How many attempts ran and how many of them passed.
package struct PassTally: Sendable, Encodable, Equatable {
    package var attempts: Int
    package var passed: Int
    package var passRate: Double

    package init(attempts: Int, passed: Int) {
        self.attempts = attempts
        self.passed = passed
        self.passRate = attempts == 0 ? 0 : Double(passed) / Double(attempts)
    }
}

/// A quarantined scenario: `orchestrate quarantine list`.
package struct QuarantineEntry: Sendable, Encodable {
    package var scenarioID: String
    package var reason: String
    package var automatic: Bool
    package var score: Double?
    package var addedAt: Date
    /// The last UTC day the quarantine holds (`YYYY-MM-DD`); `nil`: until it is removed.
    package var until: String?
    package var owner: String?
    /// The scenario's newest outcomes (at most ``QuarantineEntry/recentOutcomes``), oldest first.
    package var lastOutcomes: [String]

    /// How many of a quarantined scenario's newest outcomes `quarantine list` shows.
    package static let recentOutcomes = 5
}

extension RunStore {
    /// The scenarios of `project` by flakiness score over the attempts finished since `since`, highest first: the one
    /// implementation of ``FlakinessScore``. Whole days come from the rollup `scenario_days` (brought up to date as
    /// runs settle), the window's first, partial day from the attempts themselves. `scenarioIDs` narrows it to those
    /// (`nil`: all), `branch` to the runs of one branch. `scoresOnly` leaves out the verdict counts and the newest
    /// evidence (two lookups per scenario; automatic quarantine needs only the scores).
    /// Whether any attempt of the project made an exchange through its mock server since `since` (whole UTC days, from
    /// the endpoints' rollup).
    package func madeExchanges(project: String, since: Date) async throws -> Bool {
        let rows = try await database.client.query(
            """
            SELECT EXISTS (SELECT 1 FROM endpoint_days
                           WHERE project = \(project) AND day >= (\(since)::timestamptz AT TIME ZONE 'UTC')::date)
            """, logger: database.logger)
        for try await made in rows.decode(Bool.self) { return made }
        return false
    }

    package func flakiness(
        project: String, since: Date, scenarioIDs: [String]? = nil, branch: String? = nil, limit: Int,
        scoresOnly: Bool = false
    ) async throws -> [FlakinessLine] {
        let (priorFlips, priorTransitions) = (FlakinessScore.priorFlips, FlakinessScore.priorTransitions)
        let liveModes = Mode.allCases.filter { $0.lane == .live }.map(\.rawValue)
        // The rollup holds whole UTC days: the window's first, partial day comes from the attempts. They are read on
        // their own (by time, or by the project's history), then joined to their runs: a plan that started from the
        // runs read every run's attempts, of every project.
        let firstEnd = Calendar.utc.date(byAdding: .day, value: 1, to: Calendar.utc.startOfDay(for: since))!
        let rows = try await database.client.query(
            """
            WITH first_day AS MATERIALIZED (
                SELECT a.run_id, a.scenario_id, a.mode, a.outcome, a.finished_at, a.id FROM attempts a
                WHERE a.state = 'finished' AND a.outcome IS NOT NULL AND a.incident IS NULL AND a.project = \(project)
                  AND a.finished_at >= \(since) AND a.finished_at < \(firstEnd)
            ), first_attempts AS (
                SELECT *, lag(passed) OVER w AS previous, row_number() OVER w AS position,
                       count(*) OVER (PARTITION BY scenario_id, branch, git_revision, live) AS size
                FROM (SELECT a.scenario_id, coalesce(r.branch, '') AS branch, coalesce(r.git_revision, '') AS git_revision,
                             coalesce(a.mode, r.mode) = ANY(\(liveModes)::text[]) AS live, a.outcome = 'passed' AS passed, a.finished_at, a.id
                      FROM first_day a JOIN runs r ON r.id = a.run_id) t
                WINDOW w AS (PARTITION BY scenario_id, branch, git_revision, live ORDER BY finished_at, id)
            ), days AS (
                SELECT scenario_id, branch, git_revision, live, date '-infinity' AS day, count(*) AS attempts,
                       count(*) FILTER (WHERE passed) AS passes, count(previous) AS transitions, count(*) FILTER (WHERE previous <> passed) AS flips,
                       bool_or(passed) FILTER (WHERE position = 1) AS first_passed, bool_or(passed) FILTER (WHERE position = size) AS last_passed
                FROM first_attempts GROUP BY scenario_id, branch, git_revision, live
                UNION ALL
                SELECT scenario_id, branch, git_revision, live, day, attempts, passes, transitions, flips, first_passed, last_passed
                FROM scenario_days WHERE project = \(project) AND day >= (\(firstEnd)::timestamptz AT TIME ZONE 'UTC')::date
            ), linked AS (
                -- A day's first attempt pairs with the previous day's last of the same branch, revision and backend.
                SELECT *, lag(last_passed) OVER (PARTITION BY scenario_id, branch, git_revision, live ORDER BY day) AS previous_day
                FROM days
                WHERE (\(branch)::text IS NULL OR branch = \(branch))
                  -- IN over unnest, not = ANY: a hashed lookup per row rather than a walk along the array.
                  AND (\(scenarioIDs)::text[] IS NULL OR scenario_id IN (SELECT unnest(\(scenarioIDs)::text[])))
            ), scored AS (
                SELECT scenario_id, sum(attempts)::int AS attempts, sum(passes)::int AS passes,
                       (sum(transitions) + count(previous_day))::int AS transitions,
                       (sum(flips) + count(*) FILTER (WHERE previous_day <> first_passed))::int AS flips,
                       coalesce(sum(attempts) FILTER (WHERE NOT live), 0)::int AS replay_attempts,
                       coalesce(sum(passes) FILTER (WHERE NOT live), 0)::int AS replay_passes,
                       coalesce(sum(attempts) FILTER (WHERE live), 0)::int AS live_attempts,
                       coalesce(sum(passes) FILTER (WHERE live), 0)::int AS live_passes
                FROM linked GROUP BY scenario_id
            ), top AS (
                SELECT *, (flips + \(priorFlips)::float8) / (transitions + \(priorTransitions)::float8) AS score
                FROM scored ORDER BY score DESC, scenario_id LIMIT \(limit)
            )
            SELECT top.scenario_id, s.name, top.score, top.attempts, top.passes, top.transitions, top.flips,
                   CASE WHEN \(scoresOnly) THEN '{}' ELSE coalesce((SELECT jsonb_object_agg(v.verdict, v.n)::text FROM (
                       SELECT rs.verdict, count(*) AS n FROM run_scenarios rs JOIN runs r ON r.id = rs.run_id
                       WHERE rs.project = \(project) AND rs.scenario_id = top.scenario_id AND rs.verdict IS NOT NULL
                         AND r.created_at >= \(since)
                       GROUP BY rs.verdict) v), '{}') END AS verdicts,
                   last.verdict AS last_verdict, last.verdict_reason AS last_reason, last.evidence::text AS last_evidence,
                   EXISTS (SELECT 1 FROM quarantine q WHERE q.project = \(project) AND q.scenario_id = top.scenario_id)
                       AS quarantined,
                   top.replay_attempts, top.replay_passes, top.live_attempts, top.live_passes
            FROM top JOIN scenarios s ON s.project = \(project) AND s.id = top.scenario_id
            LEFT JOIN LATERAL (
                SELECT rs.verdict, rs.verdict_reason, rs.evidence -> 0 AS evidence
                FROM run_scenarios rs JOIN runs r ON r.id = rs.run_id
                WHERE NOT \(scoresOnly) AND rs.project = \(project) AND rs.scenario_id = top.scenario_id AND rs.verdict IS NOT NULL
                  AND rs.verdict <> 'stable'
                ORDER BY r.created_at DESC LIMIT 1
            ) last ON true
            ORDER BY top.score DESC, top.scenario_id
            """,
            logger: database.logger
        )
        var lines: [FlakinessLine] = []
        let decoder = JSONDecoder()
        for try await row in rows {
            let column = NamedColumns(row)
            var lanes: [String: PassTally] = [:]
            for (lane, prefix) in [(Mode.replay, "replay"), (Mode.live, "live")] {
                let attempts: Int = try column("\(prefix)_attempts")
                if attempts > 0 {
                    lanes[lane.rawValue] = PassTally(attempts: attempts, passed: try column("\(prefix)_passes"))
                }
            }
            lines.append(
                FlakinessLine(
                    scenarioID: try column("scenario_id"), name: try column("name"), score: try column("score"),
                    attempts: try column("attempts"), passed: try column("passes"), lanes: lanes,
                    transitions: try column("transitions"), flips: try column("flips"),
                    verdicts: Self.verdictCounts(try column("verdicts"), decoder: decoder),
                    lastVerdict: try column("last_verdict", as: String?.self).flatMap(Verdict.init(rawValue:)),
                    lastReason: try column("last_reason"),
                    lastEvidence: try column("last_evidence", as: String?.self).flatMap {
                        try? decoder.decode(NetworkDifference.self, from: Data($0.utf8))
                    },
                    quarantined: try column("quarantined")
                ))
        }
        return lines
    }

    /// `{"drift": 2, "stable": 5}` as stored, by verdict (a verdict this build does not know is left out).
    private static func verdictCounts(_ json: String, decoder: JSONDecoder) -> [Verdict: Int] {
        let counts = (try? decoder.decode([String: Int].self, from: Data(json.utf8))) ?? [:]
        return Dictionary(
            uniqueKeysWithValues: counts.compactMap { key, count in Verdict(rawValue: key).map { ($0, count) } })
    }

    /// Quarantines a scenario of `project` by hand (replacing an automatic entry), through the UTC day `until`
    /// (`YYYY-MM-DD`; `nil`: until removed), owned by `owner`. False when it has no scenario with that id.
    package func quarantine(
        _ scenarioID: String, project: String, reason: String, until: String? = nil, owner: String? = nil
    ) async throws -> Bool {
        let rows = try await database.client.query(
            """
            INSERT INTO quarantine (project, scenario_id, reason, automatic, until, owner)
            SELECT project, id, \(reason), false, \(until)::date, \(owner) FROM scenarios
            WHERE project = \(project) AND id = \(scenarioID)
            ON CONFLICT (project, scenario_id) DO UPDATE SET reason = excluded.reason, automatic = false, score = NULL,
                added_at = now(), until = excluded.until, owner = excluded.owner
            RETURNING scenario_id
            """,
            logger: database.logger
        )
        for try await _ in rows { return true }
        return false
    }

    /// Takes out the quarantines of `project` whose last day (UTC) has passed, and returns them.
    package func endQuarantines(project: String) async throws -> [QuarantineEntry] {
        try await quarantineEntries(
            """
            DELETE FROM quarantine q WHERE q.project = \(project) AND q.until < \(unescaped: Self.todaySQL)
            RETURNING \(unescaped: Self.quarantineColumns), '{}'::text[] AS last_outcomes
            """)
    }

    /// Takes a scenario of `project` out of quarantine. False when it was not in it.
    package func release(_ scenarioID: String, project: String) async throws -> Bool {
        let rows = try await database.client.query(
            "DELETE FROM quarantine WHERE project = \(project) AND scenario_id = \(scenarioID) RETURNING scenario_id",
            logger: database.logger
        )
        for try await _ in rows { return true }
        return false
    }

    /// The quarantined scenarios of `project`, newest first, each with its newest outcomes.
    package func quarantined(project: String) async throws -> [QuarantineEntry] {
        try await quarantineEntries(
            """
            SELECT \(unescaped: Self.quarantineColumns),
                   coalesce((SELECT array_agg(o.outcome ORDER BY o.finished_at, o.id)
                             FROM (SELECT a.outcome, a.finished_at, a.id FROM attempts a
                                   WHERE a.project = q.project AND a.scenario_id = q.scenario_id AND a.outcome IS NOT NULL
                                   ORDER BY a.finished_at DESC, a.id DESC LIMIT \(QuarantineEntry.recentOutcomes)) o),
                            '{}') AS last_outcomes
            FROM quarantine q WHERE q.project = \(project)
            ORDER BY q.added_at DESC, q.scenario_id
            """)
    }

    /// Today's UTC date, in SQL: a quarantine whose `until` is before it has ended.
    package static let todaySQL = "(now() AT TIME ZONE 'UTC')::date"

    private static let quarantineColumns =
        "q.scenario_id, q.reason, q.automatic, q.score, q.added_at, q.until::text AS until, q.owner"

    private func quarantineEntries(_ query: PostgresQuery) async throws -> [QuarantineEntry] {
        let rows = try await database.client.query(query, logger: database.logger)
        var entries: [QuarantineEntry] = []
        for try await row in rows {
            let column = NamedColumns(row)
            entries.append(
                QuarantineEntry(
                    scenarioID: try column("scenario_id"), reason: try column("reason"),
                    automatic: try column("automatic"),
                    score: try column("score"), addedAt: try column("added_at"), until: try column("until"),
                    owner: try column("owner"), lastOutcomes: try column("last_outcomes")))
        }
        return entries
    }

    /// Applies automatic quarantine's changes in one transaction: `add` goes in (an entry made by hand stays as it is,
    /// an automatic one gets the new score), `release` comes out if its entry is automatic. Returns what actually went
    /// in (new entries) and came out.
    package func applyAutomaticQuarantine(
        project: String, add: [(scenarioID: String, score: Double, reason: String)], release: [String]
    ) async throws -> (added: [String], released: [String]) {
        guard !add.isEmpty || !release.isEmpty else { return ([], []) }
        return try await database.withTransaction { connection in
            var added: [String] = []
            var released: [String] = []
            let addedRows = try await connection.query(
                """
                INSERT INTO quarantine (project, scenario_id, reason, automatic, score)
                SELECT \(project), x.id, x.reason, true, x.score FROM unnest(\(add.map(\.scenarioID))::text[], \(add.map(\.score))::float8[],
                                                                          \(add.map(\.reason))::text[]) AS x(id, score, reason)
                ON CONFLICT (project, scenario_id) DO UPDATE SET score = excluded.score WHERE quarantine.automatic
                RETURNING scenario_id, (xmax = 0) AS inserted
                """,
                logger: database.logger
            )
            for try await (id, inserted) in addedRows.decode((String, Bool).self) where inserted { added.append(id) }
            let releasedRows = try await connection.query(
                "DELETE FROM quarantine WHERE project = \(project) AND scenario_id = ANY(\(release)) AND automatic RETURNING scenario_id",
                logger: database.logger
            )
            for try await id in releasedRows.decode(String.self) { released.append(id) }
            return (added, released)
        }
    }
}
