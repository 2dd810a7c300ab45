import Foundation
import OrchestrateModel
import PostgresNIO

// The queue's hot statements, prepared once per connection: PostgreSQL then neither parses nor
// (after a few executions) plans them again for every attempt. Every parameter is cast to the type
// it is bound with, so the server infers exactly that type.

/// Claims the next attempt (see ``AttemptQueue/claim(runID:worker:port:)``).
struct ClaimStatement: PostgresPreparedStatement {
    static let sql = """
        WITH next AS (
            SELECT id FROM attempts
            WHERE run_id = $1::uuid AND state = 'queued'
              AND (avoid_worker IS NULL OR avoid_worker <> $2::text OR avoid_until <= now())
            ORDER BY expected_ms DESC NULLS FIRST, id
            LIMIT 1
            FOR UPDATE SKIP LOCKED
        )
        UPDATE attempts a
        SET state = 'running', lease_owner = $2::text, lease_token = gen_random_uuid(),
            lease_expires_at = now() + $3::bigint * interval '1 millisecond',
            worker = $2::text, host = $4::text, port = $5::bigint, started_at = now()
        FROM next, run_scenarios rs, scenarios s
        WHERE a.id = next.id AND rs.run_id = a.run_id AND rs.scenario_id = a.scenario_id AND s.id = a.scenario_id
        RETURNING a.id, a.scenario_id, a.attempt, a.lease_token, a.expected_ms, rs.max_attempts,
                  rs.command, rs.timeout_ms, rs.env::text, rs.tags, s.name, s.uri, s.line
        """
    typealias Row = (Int64, String, Int32, UUID, Int64?, Int32, String, Int64, String, [String], String, String?, Int32?)

    var runID: UUID
    var owner: String
    var leaseMilliseconds: Int64
    var host: String
    var port: Int

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 5)
        bindings.append(runID)
        bindings.append(owner)
        bindings.append(leaseMilliseconds)
        bindings.append(host)
        bindings.append(Int64(port))
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

/// Records a result under the lease, queues a retry when due and settles the scenario, in one statement.
struct CompleteStatement: PostgresPreparedStatement {
    static let sql = """
        WITH done AS (
            UPDATE attempts
            SET state = 'finished', finished_at = now(), duration_ms = $3::bigint,
                outcome = $4::text, exit_code = $5::bigint, signal = $6::bigint, pid = $7::bigint,
                stdout = $8::text, stderr = $9::text, error = $10::text, lease_expires_at = NULL
            WHERE id = $1::bigint AND lease_token = $2::uuid AND state = 'running'
            RETURNING run_id, scenario_id, attempt, expected_ms, worker
        ), retry AS (
            INSERT INTO attempts (run_id, scenario_id, attempt, expected_ms, avoid_worker, avoid_until)
            SELECT d.run_id, d.scenario_id, d.attempt + 1, d.expected_ms, d.worker, now() + interval '1 second'
            FROM done d JOIN run_scenarios rs ON rs.run_id = d.run_id AND rs.scenario_id = d.scenario_id
            WHERE $4::text <> 'passed' AND d.attempt < rs.max_attempts
            ON CONFLICT DO NOTHING
            RETURNING attempt
        ), settle AS (
            UPDATE run_scenarios rs
            SET result = CASE WHEN $4::text = 'passed' THEN (CASE WHEN d.attempt > 1 THEN 'flaky' ELSE 'passed' END)
                              ELSE 'failed' END
            FROM done d
            WHERE rs.run_id = d.run_id AND rs.scenario_id = d.scenario_id
              AND ($4::text = 'passed' OR d.attempt >= rs.max_attempts)
            RETURNING rs.result
        )
        SELECT (SELECT count(*) FROM done), (SELECT count(*) FROM retry), (SELECT result FROM settle)
        """
    typealias Row = (Int64, Int64, String?)

    var attemptID: Int64
    var token: UUID
    var result: AttemptResult

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 10)
        bindings.append(attemptID)
        bindings.append(token)
        bindings.append(result.durationMilliseconds)
        bindings.append(result.outcome.rawValue)
        bindings.append(result.exitCode.map(Int64.init))
        bindings.append(result.signal.map(Int64.init))
        bindings.append(result.pid.map(Int64.init))
        bindings.append(result.stdout)
        bindings.append(result.stderr)
        bindings.append(result.error)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

/// Queued and running attempts left in a run.
struct CountsStatement: PostgresPreparedStatement {
    static let sql = """
        SELECT count(*) FILTER (WHERE state = 'queued'), count(*) FILTER (WHERE state = 'running')
        FROM attempts WHERE run_id = $1::uuid AND state <> 'finished'
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
