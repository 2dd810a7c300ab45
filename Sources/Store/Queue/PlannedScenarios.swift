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
            SELECT rs.scenario_id, s.name, rs.command, rs.tags, rs.timeout_ms, rs.env::text, s.uri, s.line, rs.max_attempts
            FROM run_scenarios rs JOIN scenarios s ON s.id = rs.scenario_id
            WHERE rs.run_id = \(runID)
            """,
            logger: database.logger
        )
        var entries: [String: Entry] = [:]
        let decoder = JSONDecoder()
        for try await row in rows.decode((String, String, String, [String], Int64, String, String?, Int?, Int).self) {
            let environment = row.5 == "{}" ? [:] : (try? decoder.decode([String: String].self, from: Data(row.5.utf8))) ?? [:]
            entries[row.0] = Entry(
                scenario: Scenario(id: row.0, name: row.1, command: row.2, tags: row.3, timeoutMilliseconds: row.4,
                                   environment: environment, uri: row.6, line: row.7),
                maxAttempts: row.8
            )
        }
        remember(runID, entries)
        return entries
    }
}
