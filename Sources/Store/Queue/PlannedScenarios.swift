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
        for try await row in rows {
            let column = NamedColumns(row)
            let scenario = try RunStore.plannedScenario(column, decoder: decoder, batches: &batches)
            entries[scenario.id] = Entry(scenario: scenario, maxAttempts: try column("max_attempts"))
        }
        remember(runID, entries)
        return entries
    }
}
