import Foundation
import OrchestrateModel
import PostgresNIO

/// A run found by its join key, as a node that arrives after it was planned sees it.
package struct JoinableRun: Sendable, Hashable {
    package var id: UUID
    package var state: RunState
    package var startedAt: Date
    /// The exit code it was judged with; `nil` until it is judged.
    package var exitCode: Int32?
    /// Its suite: whose history, flakiness and quarantine it adds to.
    package var project: String
    /// Which failures its retries are for; `nil` for a run planned before it was stored (every failure).
    package var retryWhen: RetryWhen?
}

/// One host's part in a run: its slots and what they did.
package struct HostShare: Sendable, Hashable {
    package var host: String
    /// The nodes (CI nodes, agents) that worked the run from this host.
    package var nodes: [String]
    package var slots: Int
    package var running: Int
    package var finished: Int
    /// Milliseconds its slots spent running attempts.
    package var busyMilliseconds: Int64
    /// When its last attempt finished.
    package var lastFinishedAt: Date?
}

extension RunStore {
    /// The run planned under `key`, if any.
    package func run(joinKey key: String) async throws -> JoinableRun? {
        try await joinable(where: "join_key = $1", key)
    }

    /// The run `id`, if any, as ``run(joinKey:)`` describes it.
    package func joinable(_ id: UUID) async throws -> JoinableRun? {
        try await joinable(where: "id = $1", id)
    }

    private func joinable(
        where condition: String, _ value: some PostgresEncodable & Sendable
    ) async throws -> JoinableRun? {
        var binds = PostgresBindings()
        try binds.append(value)
        let rows = try await database.client.query(
            PostgresQuery(
                unsafeSQL: "SELECT id, state, created_at, exit_code, project, retry_when FROM runs WHERE \(condition)",
                binds: binds
            ),
            logger: database.logger)
        for try await (id, state, created, code, project, retryWhen) in rows.decode(
            (UUID, String, Date, Int32?, String, String?).self)
        {
            return JoinableRun(
                id: id, state: RunState(rawValue: state) ?? .running, startedAt: created, exitCode: code,
                project: project, retryWhen: retryWhen.flatMap(RetryWhen.init(rawValue:)))
        }
        return nil
    }

    /// The oldest running run of `project` with attempts waiting, for an agent that serves whatever comes
    /// (`agent --forever`).
    package func nextRunWithWork(project: String) async throws -> UUID? {
        let rows = try await database.client.query(
            """
            SELECT r.id FROM runs r
            WHERE r.state = 'running' AND r.project = \(project) AND EXISTS (SELECT 1 FROM attempts a WHERE a.run_id = r.id AND a.state = 'queued')
            ORDER BY r.created_at LIMIT 1
            """,
            logger: database.logger)
        for try await id in rows.decode(UUID.self) { return id }
        return nil
    }

    /// Records that a process (`member`, `host/pid`) of `host` works the run with `workers` slots as `node`.
    package func join(_ runID: UUID, member: String, host: String, node: String, workers: Int) async throws {
        try await database.client.query(
            """
            INSERT INTO run_members (run_id, member, host, node, workers) VALUES (\(runID), \(member), \(host), \(node), \(workers))
            ON CONFLICT (run_id, member) DO UPDATE SET node = excluded.node, workers = excluded.workers
            """,
            logger: database.logger)
    }

    /// Takes the judging of a drained run: exactly one caller gets `true` — the first to ask once no attempt is queued
    /// or running — and marks the run finished. A judge that took it and never recorded an exit code (it died) is
    /// replaced after `stale`.
    package func claimJudgement(_ runID: UUID, by member: String, stale: Duration = .seconds(60)) async throws -> Bool {
        let rows = try await database.client.query(
            """
            UPDATE runs SET state = 'finished', finished_at = coalesce(finished_at, now()), judged_by = \(member), judged_at = now()
            WHERE id = \(runID)
              AND (judged_by IS NULL OR (exit_code IS NULL AND judged_at < now() - \(stale.wholeMilliseconds) * interval '1 millisecond'))
              -- One state each, as the partial indexes of queued and of running attempts hold them. Asked of both
              -- states at once, no index matched: the planner read the attempts table from its start, expecting to
              -- meet such an attempt early, and with none left read every attempt of every run.
              AND NOT EXISTS (SELECT 1 FROM attempts WHERE run_id = \(runID) AND state = 'queued')
              AND NOT EXISTS (SELECT 1 FROM attempts WHERE run_id = \(runID) AND state = 'running')
            RETURNING id
            """,
            logger: database.logger)
        for try await _ in rows.decode(UUID.self) { return true }
        return false
    }

    /// Counts the run's scenario-days again into the rollup `scenario_days` (what `flaky` and the dashboards read): the
    /// judge's part of settling a run, which it does while it writes the reports. (A run that settles without a judge,
    /// interrupted, is counted by a trigger.)
    package func rollUp(_ runID: UUID) async throws {
        try await database.client.query("SELECT orchestrate_roll_up_run(\(runID))", logger: database.logger)
    }

    /// Whether any finished attempt of the run did not pass (the run's index of failures finds them).
    package func hasFailedAttempts(_ runID: UUID) async throws -> Bool {
        let rows = try await database.client.query(
            "SELECT EXISTS (SELECT 1 FROM attempts WHERE run_id = \(runID) AND outcome <> 'passed')",
            logger: database.logger)
        for try await failed in rows.decode(Bool.self) { return failed }
        return false
    }

    /// Stores the exit code the judge gave the run: the code every node of it exits with.
    package func recordExitCode(_ runID: UUID, _ code: Int32) async throws {
        try await database.client.query(
            "UPDATE runs SET exit_code = \(code) WHERE id = \(runID)", logger: database.logger)
    }

    /// The scenarios `node` ran in the newest run of the family of `runID` (the run and its node re-runs) that it
    /// worked — only those that failed there with `failedOnly` — and that run's id; `nil` when the node worked none.
    package func share(
        of node: String, in runID: UUID, failedOnly: Bool
    ) async throws -> (runID: UUID, scenarioIDs: [String])? {
        let latest = try await database.client.query(
            """
            SELECT r.id FROM runs r
            WHERE (r.id = \(runID) OR r.parent_run_id = \(runID))
              AND EXISTS (SELECT 1 FROM run_members m WHERE m.run_id = r.id AND m.node = \(node))
            ORDER BY r.created_at DESC LIMIT 1
            """,
            logger: database.logger)
        var found: UUID?
        for try await id in latest.decode(UUID.self) { found = id }
        guard let found else { return nil }
        let rows = try await database.client.query(
            """
            SELECT DISTINCT a.scenario_id FROM attempts a
            JOIN run_members m ON m.run_id = a.run_id AND m.member = a.lease_owner AND m.node = \(node)
            WHERE a.run_id = \(found) AND a.state = 'finished'
              AND (NOT \(failedOnly) OR EXISTS (SELECT 1 FROM run_scenarios rs WHERE rs.run_id = a.run_id
                                                   AND rs.scenario_id = a.scenario_id AND rs.result = 'failed'))
            ORDER BY 1
            """,
            logger: database.logger)
        var ids: [String] = []
        for try await id in rows.decode(String.self) { ids.append(id) }
        return (found, ids)
    }

    /// Each host's part in the run, by host name.
    package func hostShares(_ runID: UUID) async throws -> [HostShare] {
        let rows = try await database.client.query(
            """
            SELECT m.host, array_agg(DISTINCT m.node ORDER BY m.node) AS nodes, sum(m.workers)::bigint AS slots,
                   coalesce(sum(w.running), 0)::bigint AS running, coalesce(sum(w.finished), 0)::bigint AS finished,
                   coalesce(sum(w.busy), 0)::bigint AS busy, max(w.last_finished) AS last_finished
            FROM run_members m
            LEFT JOIN LATERAL (
                SELECT count(*) FILTER (WHERE a.state = 'running') AS running, count(*) FILTER (WHERE a.state = 'finished') AS finished,
                       sum(a.duration_ms) FILTER (WHERE a.state = 'finished') AS busy, max(a.finished_at) FILTER (WHERE a.state = 'finished') AS last_finished
                -- An abandoned attempt is neither; leaving it out lets the run's lane index find the run's attempts
                -- (otherwise every attempt of every run is read).
                FROM attempts a WHERE a.run_id = m.run_id AND a.lease_owner = m.member AND a.state <> 'abandoned'
            ) w ON true
            WHERE m.run_id = \(runID)
            GROUP BY m.host ORDER BY m.host
            """,
            logger: database.logger)
        var shares: [HostShare] = []
        for try await row in rows {
            let column = NamedColumns(row)
            shares.append(
                HostShare(
                    host: try column("host"), nodes: try column("nodes"),
                    slots: Int(try column("slots", as: Int64.self)),
                    running: Int(try column("running", as: Int64.self)),
                    finished: Int(try column("finished", as: Int64.self)),
                    busyMilliseconds: try column("busy"), lastFinishedAt: try column("last_finished")))
        }
        return shares
    }
}

extension RunStore {
    /// Where run `runID` stands on failing fast: its limit (`nil`: it does not fail fast), its genuine failures so far
    /// (scenarios settled failed, not quarantined; read from the run's failed attempts, which an index holds), and why it
    /// was stopped, once it was.
    package func failFast(_ runID: UUID) async throws -> (limit: Int?, failures: Int, stopped: String?) {
        let rows = try await database.client.query(
            """
            SELECT r.fail_fast, r.stop_reason,
                   CASE WHEN r.fail_fast IS NULL THEN 0 ELSE (
                       SELECT count(DISTINCT rs.scenario_id) FROM attempts a
                       JOIN run_scenarios rs ON rs.run_id = a.run_id AND rs.scenario_id = a.scenario_id
                       WHERE a.run_id = r.id AND a.outcome <> 'passed' AND rs.result = 'failed' AND NOT rs.quarantined) END
            FROM runs r WHERE r.id = \(runID)
            """,
            logger: database.logger)
        for try await (limit, stopped, failures) in rows.decode((Int?, String?, Int64).self) {
            return (limit, Int(failures), stopped)
        }
        return (nil, 0, nil)
    }

    /// Stops run `runID` for `reason`, unless it was stopped already; returns the reason it stopped for.
    @discardableResult
    package func stop(_ runID: UUID, because reason: String) async throws -> String {
        let rows = try await database.client.query(
            """
            UPDATE runs SET stop_reason = coalesce(stop_reason, \(reason)) WHERE id = \(runID) RETURNING stop_reason
            """,
            logger: database.logger)
        for try await stopped in rows.decode(String.self) { return stopped }
        return reason
    }

    /// What a stopped run left queued is not run: its queued attempts go, so the run can be judged once its running
    /// attempts have ended. A scenario that had failed and waited for its retry failed (its failure is not hidden as
    /// not run); the others are reported not run.
    package func dropQueued(_ runID: UUID) async throws {
        try await database.withTransaction { connection in
            try await connection.query(
                "DELETE FROM attempts WHERE run_id = \(runID) AND state = 'queued'", logger: database.logger)
            try await connection.query(
                """
                UPDATE run_scenarios rs SET result = 'failed'
                WHERE rs.run_id = \(runID) AND rs.result IS NULL AND rs.lane_count = 1
                  AND EXISTS (SELECT 1 FROM attempts a WHERE a.run_id = rs.run_id AND a.scenario_id = rs.scenario_id
                                AND a.state = 'finished' AND a.outcome <> 'passed')
                  AND NOT EXISTS (SELECT 1 FROM attempts a WHERE a.run_id = rs.run_id AND a.scenario_id = rs.scenario_id
                                    AND a.state IN ('queued', 'running'))
                """,
                logger: database.logger)
        }
    }
}
