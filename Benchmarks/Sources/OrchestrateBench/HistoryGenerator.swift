import Foundation
import Logging
import PostgresNIO
import Store

/// A synthetic history for `make bench`: `runs` finished runs of `scenarios` scenarios spread over `days`, one attempt
/// per scenario per run (so `runs × scenarios` attempts), three steps and two exchanges per attempt, on a new git
/// revision every 10 runs; every 7th run a compare run. One scenario in 50 is flaky (fails 30% of its attempts,
/// judged nondeterministic with a network difference as evidence); the rest pass. Seeded: the same every time. All of
/// it is `project`'s, with its per-day rollups.
enum HistoryGenerator {
    static func generate(database: Database, project: String, scenarios: Int, runs: Int, days: Int) async throws {
        let logger = database.logger
        let project = "'" + project.replacingOccurrences(of: "'", with: "''") + "'"
        let statements = [
            "SELECT setseed(0.42)",
            """
            INSERT INTO scenarios (project, id, name, uri, line)
            SELECT \(project), format('Features/area%s.feature: scenario %s', s % 40, s), format('scenario %s', s), format('Features/area%s.feature', s % 40), s
            FROM generate_series(1, \(scenarios)) s
            """,
            """
            INSERT INTO runs (id, created_at, finished_at, state, host, git_revision, working_directory, mode, workers, retries, scenario_count,
                              project, branch)
            SELECT md5('run' || r)::uuid, t, t + interval '20 minutes', 'finished', 'ci-' || (r % 4), 'rev' || (r / 10), '/work',
                   CASE WHEN r % 7 = 0 THEN 'compare' ELSE 'replay' END, 8, 0, \(scenarios), \(project), 'main'
            FROM generate_series(1, \(runs)) r, LATERAL (SELECT now() - (\(runs) - r) * (\(days) * interval '1 day' / \(runs)) AS t) x
            """,
            """
            INSERT INTO run_scenarios (run_id, project, scenario_id, position, command, timeout_ms, expected_ms, max_attempts, result, lanes, verdict, verdict_reason, evidence)
            SELECT id, \(project), format('Features/area%s.feature: scenario %s', s % 40, s), s, 'true', 60000, 1000, 1, result, jsonb_build_object('', result),
                   CASE WHEN s % 50 = 0 THEN 'nondeterministic' ELSE 'stable' END,
                   CASE WHEN s % 50 = 0 THEN 'replay: passed 7 of 10 times on this revision' ELSE 'passes in replay' END,
                   CASE WHEN result = 'passed' THEN '[]'::jsonb ELSE jsonb_build_array(jsonb_build_object(
                       'kind', 'body', 'request', 'GET api.bench.test/v1/feed', 'path', '$.items[0].title', 'recorded', '"Hello"',
                       'live', '"Hi"', 'step', 2, 'stepName', 'When I open the feed')) END
            FROM (SELECT r.id, s, CASE WHEN s % 50 = 0 AND random() < 0.3 THEN 'failed' ELSE 'passed' END AS result
                  FROM runs r, generate_series(1, \(scenarios)) s) x
            """,
            """
            INSERT INTO attempts (run_id, project, scenario_id, attempt, state, expected_ms, worker, host, started_at, finished_at, duration_ms,
                                  outcome, exit_code)
            SELECT r.id, rs.project, rs.scenario_id, 1, 'finished', 1000, r.host || '/1/' || (rs.position % 8), r.host,
                   r.created_at + rs.position * interval '500 milliseconds', r.created_at + rs.position * interval '500 milliseconds' + interval '1 second',
                   1000, rs.result, CASE WHEN rs.result = 'passed' THEN 0 ELSE 1 END
            FROM run_scenarios rs JOIN runs r ON r.id = rs.run_id
            ORDER BY r.created_at, rs.position
            """,
            """
            INSERT INTO steps (attempt_id, position, keyword, name, status, started_at, finished_at)
            SELECT a.id, p, (ARRAY['Given ', 'When ', 'Then '])[p], (ARRAY['I open the app', 'I open the feed', 'I see the headlines'])[p],
                   CASE WHEN p = 3 AND a.outcome <> 'passed' THEN 'failed' ELSE 'passed' END,
                   a.started_at + (p - 1) * interval '300 milliseconds', a.started_at + p * interval '300 milliseconds'
            FROM attempts a, generate_series(1, 3) p
            """,
            """
            INSERT INTO payloads (digest, content) VALUES
                (substring(sha256('[{"name":"content-type","value":"application/json"}]'::bytea) for 16), '[{"name":"content-type","value":"application/json"}]'::bytea),
                (substring(sha256('{"items":[{"title":"Hello"}]}'::bytea) for 16), '{"items":[{"title":"Hello"}]}'::bytea)
            ON CONFLICT DO NOTHING
            """,
            """
            INSERT INTO exchanges (attempt_id, sequence, mode, matched, host, method, url, status, started_at, duration_us, step_position,
                                   response_headers_digest, response_body_digest)
            SELECT a.id, q, 'replay', true, 'api.bench.test', 'GET', 'https://api.bench.test/v1/' || (ARRAY['news', 'feed'])[q], 200,
                   a.started_at + q * interval '300 milliseconds', 1500, q,
                   substring(sha256('[{"name":"content-type","value":"application/json"}]'::bytea) for 16), substring(sha256('{"items":[{"title":"Hello"}]}'::bytea) for 16)
            FROM attempts a, generate_series(1, 2) q
            """,
            // The runs were made settled, so no settling counted their days: count them all at once.
            "SELECT orchestrate_roll_up_days(NULL, NULL, NULL)",
        ]
        try await database.withTransaction { connection in
            try await connection.query("SET LOCAL synchronous_commit = off", logger: logger)
            for statement in statements {
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
        }
        try await database.client.query(
            "VACUUM (ANALYZE) attempts, runs, run_scenarios, steps, exchanges, scenarios, scenario_days, endpoint_days",
            logger: logger)
    }
}
