import Foundation
import OrchestrateModel
import PostgresNIO

// The queue's hot statements, prepared once per connection: PostgreSQL then neither parses nor
// (after a few executions) plans them again for every attempt. Every parameter is cast to the type
// it is bound with, so the server infers exactly that type.

/// One queue round (see ``AttemptQueue/round(_:)``): records results under their leases, queues
/// retries, settles scenarios, and claims the longest expected attempts for the free slots.
///
/// One row: the acks of the completions, the claimed attempts, and what is left of the run (only when a claimant got
/// nothing), as arrays. It runs in a transaction of its own (``Database/committedRows(of:)``): its times are the
/// statement's (`statement_timestamp()`), not the transaction's start, which may be a round trip earlier; a claimed
/// attempt's start is the moment it is claimed (`clock_timestamp()`), which a statement that waited on a lock before
/// its claim reaches later than it began: claims by several hosts are stamped in the order they were made. A claim never
/// sees what this statement itself changed (one snapshot), so a retry queued here is claimable from the next round on —
/// it avoids its slot for a second anyway. A retry avoids the failing slot: when that slot asks alone the retry is not
/// claimed; when several ask, the caller hands it to another one. The lanes of a compare run's scenario (replay, live)
/// run on different slots the same way, for as long as the run has more than one: a lane is not claimed by a slot
/// asking alone that ran (or just finished) its other lane, and is handed to another slot when several ask (a slot
/// running the other lane is not asking).
struct RoundStatement: PostgresPreparedStatement {
    static let sql = """
        WITH input AS (
            -- The completions as parallel arrays; absent numbers are -1 and an absent error is ''.
            SELECT u.id, u.token, u.worker, u.port, u.duration_ms, u.outcome, nullif(u.exit_code, -1) AS exit_code,
                   nullif(u.signal, -1) AS signal, nullif(u.pid, -1) AS pid, u.stdout, u.stderr, nullif(u.error, '') AS error,
                   nullif(u.startup_ms, -1) AS startup_ms, nullif(u.process_ms, -1) AS process_ms
            FROM unnest($2::bigint[], $8::uuid[], $9::text[], $10::integer[], $11::bigint[], $12::text[], $13::integer[],
                        $14::integer[], $15::integer[], $16::text[], $17::text[], $18::text[], $21::bigint[], $22::bigint[])
                 AS u(id, token, worker, port, duration_ms, outcome, exit_code, signal, pid, stdout, stderr, error, startup_ms,
                      process_ms)
        ), done AS (
            UPDATE attempts a
            SET state = 'finished', finished_at = statement_timestamp(), duration_ms = x.duration_ms, outcome = x.outcome,
                exit_code = x.exit_code, signal = x.signal, pid = x.pid, stdout = x.stdout, stderr = x.stderr,
                error = x.error, worker = x.worker, port = x.port, lease_expires_at = NULL, startup_ms = x.startup_ms,
                process_ms = x.process_ms
            FROM input x
            -- A lookup by id for each completion. Written `state = 'running'`, the condition matches the partial index
            -- of running attempts, which the planner (its statistics taken between runs) expects to hold a row or so:
            -- it then reads every running attempt once per completion, quadratic in a batch's size.
            WHERE a.id = x.id AND a.lease_token = x.token AND a.state || '' = 'running'
            RETURNING a.id, a.run_id, a.project, a.scenario_id, a.attempt, a.expected_ms, a.worker, a.outcome, a.mode, a.probe
        ), late AS (
            -- A completion whose lease was taken back (its host was presumed lost and the attempt requeued) does not count,
            -- but the abandoned execution keeps what it said, for the record.
            UPDATE attempts a
            SET fenced = jsonb_build_object('outcome', x.outcome, 'duration_ms', x.duration_ms, 'exit_code', x.exit_code,
                                            'worker', x.worker, 'at', statement_timestamp())
            FROM input x
            WHERE a.id = x.id AND a.lease_token = x.token AND a.state = 'abandoned'
        ), retry AS (
            INSERT INTO attempts (run_id, project, scenario_id, attempt, mode, expected_ms, avoid_worker, avoid_until)
            SELECT d.run_id, d.project, d.scenario_id, d.attempt + 1, d.mode, d.expected_ms, d.worker, statement_timestamp() + $7::bigint * interval '1 millisecond'
            FROM done d JOIN run_scenarios rs ON rs.run_id = d.run_id AND rs.scenario_id = d.scenario_id
            WHERE d.outcome <> 'passed' AND d.attempt < rs.max_attempts AND NOT d.probe
            ON CONFLICT DO NOTHING
            RETURNING run_id, scenario_id
        ), lane AS (
            -- A lane's last word; with one lane (every run but a compare run) it is the scenario's result, and the
            -- lanes object (lane → result, for a compare run's settlement) is not needed.
            SELECT run_id, scenario_id, min(lane_count) AS lane_count, max(result) AS result,
                   jsonb_object_agg(lane, result) FILTER (WHERE lane_count > 1) AS results, max(id) AS newest
            FROM (SELECT d.id, d.run_id, d.scenario_id, rs.lane_count, coalesce(d.mode, '') AS lane,
                         CASE WHEN d.outcome = 'passed' THEN (CASE WHEN d.attempt > 1 THEN 'flaky' ELSE 'passed' END)
                              ELSE 'failed' END AS result
                  FROM done d JOIN run_scenarios rs ON rs.run_id = d.run_id AND rs.scenario_id = d.scenario_id
                  -- An extra run of a new test (a probe) has no say: its scenario settled with its first attempt.
                  WHERE NOT d.probe AND (d.outcome = 'passed' OR d.attempt >= rs.max_attempts)) last_word
            GROUP BY run_id, scenario_id
        ), settle AS (
            UPDATE run_scenarios rs
            SET lanes = CASE WHEN l.lane_count = 1 THEN rs.lanes ELSE rs.lanes || l.results END,
                result = CASE WHEN l.lane_count = 1 THEN l.result ELSE (
                    SELECT CASE WHEN count(*) < rs.lane_count THEN NULL WHEN bool_or(v = 'failed') THEN 'failed'
                                WHEN bool_or(v = 'flaky') THEN 'flaky' ELSE 'passed' END
                    FROM jsonb_each_text(rs.lanes || l.results) AS e(k, v)) END,
                -- A single lane's pass gets the verdict such a pass gets unless history says otherwise ($19, $20; '' for
                -- none): the judge then writes only the verdicts that differ, not one per scenario of every run.
                verdict = CASE WHEN l.lane_count = 1 AND l.result = 'passed' AND $19::text <> '' THEN $19::text ELSE rs.verdict END,
                verdict_reason = CASE WHEN l.lane_count = 1 AND l.result = 'passed' AND $19::text <> '' THEN $20::text
                                      ELSE rs.verdict_reason END
            FROM lane l
            WHERE rs.run_id = l.run_id AND rs.scenario_id = l.scenario_id
            RETURNING rs.run_id, rs.scenario_id, rs.result, l.newest
        ), next AS (
            SELECT q.id FROM attempts q
            WHERE q.run_id = $1::uuid AND q.state = 'queued'
              AND (q.avoid_worker IS NULL OR q.avoid_until <= statement_timestamp() OR cardinality($3::text[]) > 1
                   OR q.avoid_worker <> ($3::text[])[1])
              AND (q.mode IS NULL OR cardinality($3::text[]) > 1 OR (SELECT workers FROM runs WHERE id = $1::uuid) = 1
                   OR NOT EXISTS (SELECT 1 FROM attempts s WHERE s.run_id = q.run_id AND s.scenario_id = q.scenario_id
                                    AND s.mode <> q.mode AND s.worker = ($3::text[])[1])
                      AND NOT EXISTS (SELECT 1 FROM input x JOIN attempts d ON d.id = x.id WHERE d.run_id = q.run_id
                                        AND d.scenario_id = q.scenario_id AND d.mode <> q.mode AND x.worker = ($3::text[])[1]))
            ORDER BY q.expected_ms DESC NULLS FIRST, q.id
            LIMIT cardinality($3::text[])
            FOR UPDATE SKIP LOCKED
        ), claimed AS (
            UPDATE attempts a
            SET state = 'running', lease_owner = $4::text, lease_token = gen_random_uuid(),
                lease_expires_at = statement_timestamp() + $5::bigint * interval '1 millisecond',
                host = $6::text, worker = NULL, port = NULL, started_at = clock_timestamp()
            FROM next
            WHERE a.id = next.id
            -- Which scenario, not its definition: the caller has the run's plan (PlannedScenarios).
            RETURNING a.id, a.scenario_id, a.attempt, a.lease_token, a.expected_ms,
                      CASE WHEN a.avoid_until > statement_timestamp() THEN a.avoid_worker
                           WHEN a.mode IS NOT NULL THEN coalesce(
                               (SELECT s.worker FROM attempts s WHERE s.run_id = a.run_id AND s.scenario_id = a.scenario_id
                                  AND s.mode <> a.mode AND s.worker IS NOT NULL ORDER BY s.id DESC LIMIT 1),
                               (SELECT x.worker FROM input x JOIN attempts d ON d.id = x.id WHERE d.run_id = a.run_id
                                  AND d.scenario_id = a.scenario_id AND d.mode <> a.mode LIMIT 1)) END AS avoid, a.mode,
                      array_to_string(a.lost_hosts, ' ') AS lost
        ), answers AS (
            -- What the acks say of their scenarios, as two objects read by key: the scenarios a retry was queued for, and
            -- the result a scenario settled with, under the id of its newest completion this round (a scenario settles
            -- once: when both lanes of a compare run finish in one round, the later one says so). Joined instead, these
            -- statement-made rows, each expected to be a row or so, are read once per completion.
            SELECT (SELECT coalesce(jsonb_object_agg(r.run_id::text || '/' || r.scenario_id, true), '{}') FROM retry r) AS retried,
                   (SELECT coalesce(jsonb_object_agg(st.newest::text, st.result), '{}') FROM settle st) AS settled
        ), acks AS (
            -- A result recorded already under the same token was this round's own, sent again after its answer was lost
            -- (the server died after committing it): accepted, with what it did then.
            SELECT x.id, d.id IS NOT NULL OR f.id IS NOT NULL AS accepted,
                   CASE WHEN d.id IS NOT NULL THEN o.retried ? (d.run_id::text || '/' || d.scenario_id)
                        ELSE f.next IS NOT NULL END AS retried,
                   CASE WHEN d.id IS NOT NULL THEN o.settled ->> d.id::text
                        WHEN f.id IS NOT NULL AND f.next IS NULL THEN
                            (SELECT rs.result FROM run_scenarios rs WHERE rs.run_id = f.run_id AND rs.scenario_id = f.scenario_id)
                   END AS settled
            FROM input x CROSS JOIN answers o LEFT JOIN done d ON d.id = x.id
            -- LIMIT 1 keeps this a lookup by id for each completion: joined instead, with the statistics of a young table
            -- it became a scan of every finished attempt in the database.
            LEFT JOIN LATERAL (
                SELECT a.id, a.run_id, a.scenario_id,
                       (SELECT n.id FROM attempts n WHERE n.run_id = a.run_id AND n.scenario_id = a.scenario_id
                          AND n.mode IS NOT DISTINCT FROM a.mode AND n.attempt = a.attempt + 1 AND n.state <> 'abandoned' LIMIT 1) AS next
                FROM attempts a WHERE d.id IS NULL AND a.id = x.id AND a.lease_token = x.token AND a.state = 'finished'
                LIMIT 1
            ) f ON true
        )
        -- One row: arrays in the same order (by attempt id) rather than a row per attempt, which cost the client more to
        -- take apart than the server to build. Absent values are '' and -1 (arrays cannot carry NULLs to the client).
        SELECT (SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM acks) AS ack_ids,
               (SELECT coalesce(array_agg(accepted ORDER BY id), '{}') FROM acks) AS ack_accepted,
               (SELECT coalesce(array_agg(retried ORDER BY id), '{}') FROM acks) AS ack_retried,
               (SELECT coalesce(array_agg(coalesce(settled, '') ORDER BY id), '{}') FROM acks) AS ack_settled,
               (SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM claimed) AS claim_ids,
               (SELECT coalesce(array_agg(scenario_id ORDER BY id), '{}') FROM claimed) AS claim_scenarios,
               (SELECT coalesce(array_agg(attempt ORDER BY id), '{}') FROM claimed) AS claim_attempts,
               (SELECT coalesce(array_agg(lease_token ORDER BY id), '{}') FROM claimed) AS claim_tokens,
               (SELECT coalesce(array_agg(coalesce(expected_ms, -1) ORDER BY id), '{}') FROM claimed) AS claim_expected,
               (SELECT coalesce(array_agg(coalesce(mode, '') ORDER BY id), '{}') FROM claimed) AS claim_modes,
               (SELECT coalesce(array_agg(coalesce(avoid, '') ORDER BY id), '{}') FROM claimed) AS claim_avoid,
               (SELECT coalesce(array_agg(lost ORDER BY id), '{}') FROM claimed) AS claim_lost,
               -- What is left of the run, when a claimant got nothing (-1 otherwise).
               CASE WHEN (SELECT count(*) FROM claimed) < cardinality($3::text[]) THEN
                   (SELECT count(*) FROM attempts WHERE run_id = $1::uuid AND state = 'queued')
                       - (SELECT count(*) FROM claimed) + (SELECT count(*) FROM retry)
               ELSE -1 END AS queued,
               CASE WHEN (SELECT count(*) FROM claimed) < cardinality($3::text[]) THEN
                   (SELECT count(*) FROM attempts WHERE run_id = $1::uuid AND state = 'running')
                       - (SELECT count(*) FROM done) + (SELECT count(*) FROM claimed)
               ELSE -1 END AS running
        """
    /// What a round did: an ack per completion and a row per claimed attempt (in attempt id order), and what is left
    /// of the run when a claimant got nothing.
    struct Row {
        struct Ack {
            var attemptID: Int64
            var accepted: Bool
            var retryQueued: Bool
            /// The scenario's result when the completion settled it.
            var settled: ScenarioResult?
        }

        struct Claim {
            var attemptID: Int64
            var scenarioID: String
            var attempt: Int
            var token: UUID
            var expectedMilliseconds: Int64?
            var lane: Mode?
            /// The worker a retry keeps off for a while.
            var avoid: String?
            /// The hosts the attempt was lost on before.
            var lostHosts: [String]
        }

        var acks: [Ack]
        var claims: [Claim]
        var counts: QueueCounts?
    }

    var runID: UUID
    var completions: [(claimed: ClaimedAttempt, result: AttemptResult)]
    var claimants: [String]
    var owner: String
    var leaseMilliseconds: Int64
    var host: String
    /// How long a retry keeps off the slot whose attempt failed.
    var avoidanceMilliseconds: Int64
    /// The verdict a single lane's pass is stored with when it settles (``AttemptQueue/passVerdict``).
    var passVerdict: (verdict: Verdict, reason: String)?

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 22)
        bindings.append(runID)
        bindings.append(completions.map(\.claimed.id))
        bindings.append(claimants)
        bindings.append(owner)
        bindings.append(leaseMilliseconds)
        bindings.append(host)
        bindings.append(avoidanceMilliseconds)
        bindings.append(completions.map(\.claimed.leaseToken))
        bindings.append(completions.map(\.claimed.worker.description))
        bindings.append(completions.map { Int32(clamping: $0.claimed.port) })
        bindings.append(completions.map(\.result.durationMilliseconds))
        bindings.append(completions.map(\.result.outcome.rawValue))
        bindings.append(completions.map { Int32(clamping: $0.result.exitCode ?? -1) })
        bindings.append(completions.map { Int32(clamping: $0.result.signal ?? -1) })
        bindings.append(completions.map { $0.result.pid ?? -1 })
        bindings.append(completions.map(\.result.stdout))
        bindings.append(completions.map(\.result.stderr))
        bindings.append(completions.map { $0.result.error ?? "" })
        bindings.append(passVerdict?.verdict.rawValue ?? "")
        bindings.append(passVerdict?.reason ?? "")
        bindings.append(completions.map { $0.result.startupMilliseconds ?? -1 })
        bindings.append(completions.map { $0.result.processMilliseconds ?? -1 })
        return bindings
    }

    /// Arrays cannot carry NULLs to the client: absent values come as '' and -1, and become `nil` here.
    func decodeRow(_ row: PostgresRow) throws -> Row {
        let column = NamedColumns(row)
        let (accepted, retried, settled): ([Bool], [Bool], [String]) =
            (try column("ack_accepted"), try column("ack_retried"), try column("ack_settled"))
        let acks = try column("ack_ids", as: [Int64].self).enumerated().map { index, id in
            Row.Ack(
                attemptID: id, accepted: accepted[index], retryQueued: retried[index],
                settled: ScenarioResult(rawValue: settled[index]))
        }
        let (scenarios, attempts, tokens): ([String], [Int32], [UUID]) =
            (try column("claim_scenarios"), try column("claim_attempts"), try column("claim_tokens"))
        let (expected, modes, avoid, lost): ([Int64], [String], [String], [String]) =
            (
                try column("claim_expected"), try column("claim_modes"), try column("claim_avoid"),
                try column("claim_lost")
            )
        let claims = try column("claim_ids", as: [Int64].self).enumerated().map { index, id in
            Row.Claim(
                attemptID: id, scenarioID: scenarios[index], attempt: Int(attempts[index]), token: tokens[index],
                expectedMilliseconds: expected[index] < 0 ? nil : expected[index], lane: Mode(rawValue: modes[index]),
                avoid: avoid[index].isEmpty ? nil : avoid[index],
                lostHosts: lost[index].isEmpty ? [] : lost[index].split(separator: " ").map(String.init))
        }
        let (queued, running): (Int64, Int64) = (try column("queued"), try column("running"))
        return Row(
            acks: acks, claims: claims,
            counts: queued >= 0 ? QueueCounts(queued: Int(queued), running: Int(running)) : nil)
    }
}

/// Queued and running attempts left in a run.
struct CountsStatement: PostgresPreparedStatement {
    static let sql = """
        SELECT (SELECT count(*) FROM attempts WHERE run_id = $1::uuid AND state = 'queued'),
               (SELECT count(*) FROM attempts WHERE run_id = $1::uuid AND state = 'running')
        """
    typealias Row = (Int64, Int64)

    var runID: UUID

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(runID)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

/// Claims the tests that run in one process with a claimed one
/// (``AttemptQueue/claimCompanions(of:limit:slots:budgetMilliseconds:)``): first attempts of the run's queued tests
/// with the same batch command, longest expected first, as many as fit `limit` and the budget of expected milliseconds.
/// None when the head runs alone (a retry, a lane, or a test whose batch ended before reporting it). Near the end of
/// the run (the last mile) a batch takes no more than its share of what is queued, counted up to `limit` × the slots,
/// so that no slot is left with a long batch while the others idle; the slots are those of every process that joined
/// the run (`run_members`), at least the asking host's `slots`.
struct CompanionsStatement: PostgresPreparedStatement {
    static let sql = """
        WITH slots AS (
            SELECT greatest($5::bigint, coalesce((SELECT sum(workers) FROM run_members WHERE run_id = $1::uuid), 0)) AS n
        ), head AS (
            SELECT rs.batch->>'command' AS command
            FROM attempts a JOIN run_scenarios rs ON rs.run_id = a.run_id AND rs.scenario_id = a.scenario_id
            WHERE a.id = $2::bigint AND a.lease_token = $3::uuid AND a.state = 'running' AND a.attempt = 1 AND a.mode IS NULL
              AND NOT a.solo AND rs.batch IS NOT NULL
        ), ahead AS (
            SELECT count(*) AS n FROM (SELECT 1 FROM attempts q WHERE q.run_id = $1::uuid AND q.state = 'queued'
                                       LIMIT $4::bigint * (SELECT n FROM slots)) c
        ), next AS (
            SELECT q.id, q.expected_ms
            FROM attempts q JOIN run_scenarios rs ON rs.run_id = q.run_id AND rs.scenario_id = q.scenario_id
            WHERE q.run_id = $1::uuid AND q.state = 'queued' AND q.attempt = 1 AND q.mode IS NULL AND NOT q.solo
              AND rs.batch->>'command' = (SELECT command FROM head)
            ORDER BY q.expected_ms DESC NULLS FIRST, q.id
            -- Near the end a batch takes its share of what is queued, unless the batches were sized to take a few
            -- processes ($10, Batch.processes; 0 for none), each paying a start-up dearer than its tests.
            LIMIT CASE WHEN $10::bigint > 0 THEN $4::bigint ELSE least($4::bigint, (SELECT n FROM ahead) / (SELECT n FROM slots)) END
            FOR UPDATE OF q SKIP LOCKED
        ), fitting AS (
            SELECT id FROM (SELECT id, sum(coalesce(expected_ms, 0)) OVER (ORDER BY expected_ms DESC NULLS FIRST, id) AS total
                            FROM next) t
            WHERE total <= $6::bigint
        )
        UPDATE attempts a
        SET state = 'running', lease_owner = $7::text, lease_token = gen_random_uuid(),
            lease_expires_at = statement_timestamp() + $8::bigint * interval '1 millisecond', host = $9::text, worker = NULL, port = NULL,
            started_at = clock_timestamp()
        FROM fitting f
        WHERE a.id = f.id
        RETURNING a.id, a.scenario_id, a.attempt, a.lease_token, a.expected_ms, a.lost_hosts
        """
    typealias Row = RoundStatement.Row.Claim

    var runID: UUID
    var headID: Int64
    var headToken: UUID
    var limit: Int64
    var slots: Int64
    var budgetMilliseconds: Int64
    var owner: String
    var leaseMilliseconds: Int64
    var host: String
    var processes: Int64

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 10)
        bindings.append(runID)
        bindings.append(headID)
        bindings.append(headToken)
        bindings.append(limit)
        bindings.append(slots)
        bindings.append(budgetMilliseconds)
        bindings.append(owner)
        bindings.append(leaseMilliseconds)
        bindings.append(host)
        bindings.append(processes)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        let column = NamedColumns(row)
        return Row(
            attemptID: try column("id"), scenarioID: try column("scenario_id"),
            attempt: Int(try column("attempt", as: Int32.self)),
            token: try column("lease_token"), expectedMilliseconds: try column("expected_ms"), lane: nil, avoid: nil,
            lostHosts: try column("lost_hosts"))
    }
}
