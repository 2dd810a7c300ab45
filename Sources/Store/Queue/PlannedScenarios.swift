import Foundation
import Logging
import OrchestrateModel
import PostgresNIO
import Synchronization

/// The scenarios of runs as they were planned (command, environment, limits, names and places), by run: a claim then
/// says only which scenario it is, instead of the queue sending every definition again with every attempt. Read from
/// the database as they are first claimed, or handed over whole by whoever just planned the run
/// (``AttemptQueue/remember(_:)``). Never the whole run at once: a hundred hosts joining a run of a hundred thousand
/// scenarios would each read every definition at the same moment.
final class PlannedScenarios: Sendable {
    struct Entry: Sendable {
        var scenario: Scenario
        var maxAttempts: Int
    }

    private let runs = Mutex<[UUID: [String: Entry]]>([:])

    func remember(_ runID: UUID, _ entries: [String: Entry]) {
        runs.withLock { $0[runID, default: [:]].merge(entries) { _, new in new } }
    }

    /// The run's scenarios known so far, with those of `ids` read from the database when missing (on `connection`,
    /// in its transaction, when given).
    func entries(
        of runID: UUID, including ids: [String], database: Database, on connection: PostgresConnection? = nil
    ) async throws -> [String: Entry] {
        let known = runs.withLock { $0[runID] } ?? [:]
        let missing = Array(Set(ids.filter { known[$0] == nil }))
        if missing.isEmpty { return known }
        // A lookup by key for each id. Written `rs.scenario_id = ANY(ids)`, the condition became a filter on every
        // scenario of the run whenever the table's statistics were taken before the run was planned (they said the
        // run had a row or so): a fifth of a second of the server's CPU per claim of a run of 100,000 scenarios.
        let rows = try await database.query(
            """
            SELECT \(unescaped: RunStore.plannedScenarioColumns), rs.max_attempts
            FROM unnest(\(missing)::text[]) AS m(id)
            CROSS JOIN LATERAL (
                SELECT * FROM run_scenarios rs WHERE rs.run_id = \(runID) AND rs.scenario_id = m.id LIMIT 1
            ) rs
            JOIN scenarios s ON s.project = rs.project AND s.id = rs.scenario_id
            """, on: connection)
        var entries: [String: Entry] = [:]
        let decoder = JSONDecoder()
        var batches: [String: Batch] = [:]
        for try await row in rows {
            let column = NamedColumns(row)
            let scenario = try RunStore.plannedScenario(column, decoder: decoder, batches: &batches)
            entries[scenario.id] = Entry(scenario: scenario, maxAttempts: try column("max_attempts"))
        }
        remember(runID, entries)
        return runs.withLock { $0[runID] } ?? entries
    }
}
