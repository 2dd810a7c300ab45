import PostgresNIO
import Store

/// How far the rollups that settling runs and arriving exchanges keep (migration 15) are from counting everything
/// again: the rows of `scenario_days` that a full recount does not give, and back; and the (day, endpoint) pairs of
/// `endpoint_days` whose requests, errors or misses differ from the exchanges'. `(0, 0)` when they agree. Nothing is
/// changed: the recount happens in a transaction that is rolled back.
package func rollupDifferences(in database: Database) async throws -> (scenarioDays: Int, endpointDays: Int) {
    let scenarioDays = try await database.client.withConnection { connection in
        _ = try await connection.query("BEGIN", logger: database.logger)
        do {
            _ = try await connection.query(
                "CREATE TEMP TABLE kept ON COMMIT DROP AS TABLE scenario_days", logger: database.logger)
            _ = try await connection.query("DELETE FROM scenario_days", logger: database.logger)
            _ = try await connection.query("SELECT orchestrate_roll_up_days(NULL, NULL, NULL)", logger: database.logger)
            let rows = try await connection.query(
                "SELECT count(*)::int FROM ((TABLE scenario_days EXCEPT ALL TABLE kept) UNION ALL (TABLE kept EXCEPT ALL TABLE scenario_days)) d",
                logger: database.logger)
            var count = 0
            for try await value in rows.decode(Int.self) { count = value }
            _ = try await connection.query("ROLLBACK", logger: database.logger)
            return count
        } catch {
            _ = try? await connection.query("ROLLBACK", logger: database.logger)
            throw error
        }
    }
    let rows = try await database.client.query(
        """
        SELECT count(*)::int FROM (
            SELECT project, branch, day, method, endpoint, sum(requests) AS n, sum(errors) AS e, sum(misses) AS m
            FROM endpoint_days GROUP BY 1, 2, 3, 4, 5) d
        FULL JOIN (
            SELECT project, branch, (started_at AT TIME ZONE 'UTC')::date AS day, method, endpoint, count(*) AS n,
                   count(*) FILTER (WHERE status IS NULL OR status >= 500) AS e, count(*) FILTER (WHERE NOT matched AND mode = 'replay') AS m
            FROM dash_exchanges GROUP BY 1, 2, 3, 4, 5) x USING (project, branch, day, method, endpoint)
        WHERE d.n IS DISTINCT FROM x.n OR d.e IS DISTINCT FROM x.e OR d.m IS DISTINCT FROM x.m
        """,
        logger: database.logger)
    var endpointDays = 0
    for try await value in rows.decode(Int.self) { endpointDays = value }
    return (scenarioDays, endpointDays)
}
