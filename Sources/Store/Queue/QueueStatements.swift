import Foundation
import OrchestrateModel
import PostgresNIO

// The queue's hot statements, prepared once per connection: PostgreSQL then neither parses nor
// (after a few executions) plans them again for every attempt. Every parameter is cast to the type
// it is bound with, so the server infers exactly that type.

/// One queue round (see ``AttemptQueue/round(_:)``): records results under their leases, queues
/// retries, settles scenarios, and claims attempts for the free slots: the highest rank first (a run's likely failures,
/// `run --order likely-failing`), then the longest expected.
///
/// One row: the acks of the completions, the claimed attempts in the order they were claimed, and what is left of the
/// run (only when a claimant got nothing), as arrays. The statement itself is migration 29's procedure
/// `orchestrate_round4` (Schema.version29: migration 23's `orchestrate_round3` claiming by rank; round 3 is migration
/// 21's `orchestrate_round2` told which failures may be retried and their evidence): the completions are
/// recorded and committed, then the claim is made and committed, each with a snapshot of its own,
/// before it answers. A round whose commit fails throws (completions committed before it are acknowledged as recorded
/// when sent again), and the round holds its locks for its own execution, not across the client's round trips. A later
/// change to the round is a new procedure under a new name, made by a new migration (an INOUT column cannot be changed
/// in place): hosts of an older version keep calling theirs. Its times are the statement's (`statement_timestamp()`); a
/// claimed attempt's start is the moment it is claimed (`clock_timestamp()`): claims by several hosts are stamped in
/// the order they were made. A retry queued by a round is claimable by its own claim, but avoids the failing slot for a
/// second: when that slot asks alone the retry is not claimed; when several ask, the caller hands it to another one.
/// The lanes of a compare run's scenario (replay, live) run on different slots the same way, for as long as the run has
/// more than one: a lane is not claimed by a slot asking alone that ran (or just finished) its other lane, and is
/// handed to another slot when several ask (a slot running the other lane is not asking).
struct RoundStatement: PostgresPreparedStatement {
    static let sql = """
        CALL orchestrate_round4($1::uuid, $2::bigint[], $3::text[], $4::text, $5::bigint, $6::text, $7::bigint,
                                $8::uuid[], $9::text[], $10::integer[], $11::bigint[], $12::text[], $13::integer[],
                                $14::integer[], $15::integer[], $16::text[], $17::text[], $18::text[], $19::text,
                                $20::text, $21::bigint[], $22::bigint[], $23::boolean[], $24::text[])
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
        var bindings = PostgresBindings(capacity: 24)
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
        bindings.append(completions.map { $0.result.reproduces != true })
        bindings.append(completions.map { $0.result.evidence ?? "" })
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
