import Foundation
import PostgresNIO

/// What `run --detect-new-flakes` found and did.
package struct NewTestProbes: Sendable, Equatable {
    /// Tests of the run never run before in the project with the same command (new, or changed).
    package var newTests: Int
    /// Tests in the run.
    package var tests: Int
    /// Extra runs queued.
    package var probes: Int
    /// More of the suite was new than the share allows: nothing was queued.
    package var skipped: Bool
}

extension RunStore {
    /// How many runs a new test gets in all, by how long its first run took (Datadog's budget for early flake
    /// detection): 10 under 5 s, 5 under 10 s, 3 under 30 s, 2 under 5 min, else none extra.
    package static let newTestBudget: [(underMilliseconds: Int64, runs: Int)] = [
        (5_000, 10), (10_000, 5), (30_000, 3), (300_000, 2),
    ]

    /// Queues extra runs (probes) of the run's new tests that passed their first attempt, as many as ``newTestBudget``
    /// gives for its duration — unless more than `maximumShare` of the run's tests are new (a new suite, a renamed
    /// module), when it queues nothing. A test is new when no earlier run of the project ran it with the same command.
    /// Probes run like retries (alone, any slot), but neither settle their test nor are retried: a single failing probe
    /// makes the test's outcomes in this run mixed, which the judge calls nondeterministic.
    package func queueNewTestProbes(_ runID: UUID, maximumShare: Double) async throws -> NewTestProbes {
        let cases = Self.newTestBudget.map { "WHEN a.duration_ms < \($0.underMilliseconds) THEN \($0.runs)" }.joined(
            separator: " ")
        let sql = """
            WITH this AS (SELECT id, project, created_at FROM runs WHERE id = $1),
            fresh AS (
                -- Each test's earlier runs looked up on their own (the scenario index, the first one found ends it): as
                -- an anti-join, the planner read every run's scenarios of every project.
                SELECT rs.scenario_id FROM run_scenarios rs CROSS JOIN this
                LEFT JOIN LATERAL (
                    SELECT 1 AS seen FROM run_scenarios o JOIN runs r ON r.id = o.run_id
                    WHERE o.project = this.project AND o.scenario_id = rs.scenario_id AND o.run_id <> this.id
                      AND r.created_at < this.created_at AND o.command = rs.command
                    LIMIT 1) earlier ON true
                WHERE rs.run_id = this.id AND earlier.seen IS NULL
            ), counts AS (
                SELECT (SELECT count(*) FROM fresh) AS fresh, (SELECT count(*) FROM run_scenarios WHERE run_id = $1) AS tests
            ), probes AS (
                INSERT INTO attempts (run_id, project, scenario_id, attempt, mode, expected_ms, probe)
                SELECT a.run_id, a.project, a.scenario_id, n, a.mode, a.duration_ms, true
                FROM fresh f JOIN attempts a ON a.run_id = $1 AND a.scenario_id = f.scenario_id AND a.attempt = 1
                                            AND a.state = 'finished' AND a.outcome = 'passed' AND a.mode IS NULL,
                     generate_series(2, CASE \(cases) ELSE 1 END) AS n
                WHERE (SELECT fresh::float8 <= $2::float8 * tests FROM counts)
                  AND NOT EXISTS (SELECT 1 FROM attempts b WHERE b.run_id = $1 AND b.scenario_id = f.scenario_id AND b.attempt > 1)
                RETURNING 1
            )
            SELECT fresh, tests, (SELECT count(*) FROM probes), NOT (fresh::float8 <= $2::float8 * tests) FROM counts
            """
        var binds = PostgresBindings()
        binds.append(runID)
        binds.append(maximumShare)
        let rows = try await database.client.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: database.logger)
        for try await (fresh, tests, probes, skipped) in rows.decode((Int64, Int64, Int64, Bool).self) {
            return NewTestProbes(
                newTests: Int(fresh), tests: Int(tests), probes: Int(probes), skipped: skipped && fresh > 0)
        }
        return NewTestProbes(newTests: 0, tests: 0, probes: 0, skipped: false)
    }
}
