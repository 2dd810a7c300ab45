import Foundation
import Logging
import OrchestrateModel
import PostgresNIO
import Synchronization

/// The scenarios of runs as they were planned (command, environment, limits, names and places), by run: a claim then
/// says only which scenario it is, instead of the queue sending every definition again with every attempt. Read once
/// per run from the database, or handed over by whoever just planned the run (``AttemptQueue/remember(_:)``).
final class PlannedScenarios: Sendable {
    struct Entry: Sendable {
        var scenario: Scenario
        var maxAttempts: Int
    }

    private let runs = Mutex<[UUID: [String: Entry]]>([:])

    func remember(_ runID: UUID, _ entries: [String: Entry]) {
        runs.withLock { $0[runID] = entries }
    }

    /// The run's scenarios, read from the database the first time they are asked for (or when one is missing).
    func entries(of runID: UUID, including ids: [String], database: Database) async throws -> [String: Entry] {
        if let known = runs.withLock({ $0[runID] }), ids.allSatisfy({ known[$0] != nil }) { return known }
        let rows = try await database.client.query(
            """
            SELECT \(unescaped: RunStore.plannedScenarioColumns), rs.max_attempts
            FROM run_scenarios rs JOIN scenarios s ON s.project = rs.project AND s.id = rs.scenario_id
            WHERE rs.run_id = \(runID)
            """,
            logger: database.logger
        )
        var entries: [String: Entry] = [:]
        let decoder = JSONDecoder()
        var batches: [String: Batch] = [:]
        for try await row in rows.decode(
            (String, String, String, [String], Int64, String, String?, Int?, String?, String?, Int).self)
        {
            entries[row.0] = Entry(
                scenario: RunStore.plannedScenario(
                    (row.0, row.1, row.2, row.3, row.4, row.5, row.6, row.7, row.8, row.9), decoder: decoder,
                    batches: &batches),
                maxAttempts: row.10
            )
        }
        remember(runID, entries)
        return entries
    }
}
