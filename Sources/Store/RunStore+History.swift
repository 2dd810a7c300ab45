import Foundation
import OrchestrateModel
import PostgresNIO

/// One finished attempt of a scenario, with its steps: `orchestrate history`.
package struct AttemptHistory: Sendable, Encodable {
    package var runID: UUID
    package var attempt: Int
    /// How the mock server answered (the exchanges' mode, else the run's).
    package var mode: String
    package var gitRevision: String?
    package var startedAt: Date?
    package var durationMs: Int64?
    package var outcome: String?
    package var exitCode: Int?
    package var error: String?
    package var exchanges: Int
    package var unmatchedExchanges: Int
    package var steps: [StepHistory]
}

package struct StepHistory: Sendable, Encodable {
    package var position: Int
    package var keyword: String
    package var name: String
    package var status: StepStatus
    package var startedAt: Date
    package var durationMs: Int64?
    package var error: String?
    /// Exchanges that happened during the step.
    package var exchanges: Int
}

extension RunStore {
    /// The scenario of `project` whose id is `text`, else the ids of its scenarios with history that contain it
    /// (case-insensitive), at most `limit`.
    package func scenarioIDs(containing text: String, project: String, limit: Int = 10) async throws -> [String] {
        let pattern =
            "%"
            + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_") + "%"
        let rows = try await database.client.query(
            """
            SELECT id FROM scenarios WHERE project = \(project) AND id = \(text)
            UNION ALL
            (SELECT id FROM scenarios WHERE project = \(project) AND id ILIKE \(pattern)
               AND NOT EXISTS (SELECT 1 FROM scenarios WHERE project = \(project) AND id = \(text))
             ORDER BY id LIMIT \(limit))
            """,
            logger: database.logger
        )
        var ids: [String] = []
        for try await id in rows.decode(String.self) { ids.append(id) }
        return ids
    }

    /// Run ids that start with `prefix` (lowercase hex), at most 10.
    package func runIDs(startingWith prefix: String) async throws -> [UUID] {
        let rows = try await database.client.query(
            "SELECT id FROM runs WHERE id::text LIKE \(prefix.replacingOccurrences(of: "%", with: "").replacingOccurrences(of: "_", with: "") + "%") ORDER BY created_at DESC LIMIT 10",
            logger: database.logger
        )
        var ids: [UUID] = []
        for try await id in rows.decode(UUID.self) { ids.append(id) }
        return ids
    }

    /// A scenario's finished attempts in `project`, newest first, each with its steps and how many exchanges each step
    /// made.
    package func history(scenarioID: String, project: String, limit: Int) async throws -> [AttemptHistory] {
        let rows = try await database.client.query(
            """
            SELECT a.id, a.run_id, a.attempt,
                   coalesce(a.mode, (SELECT e.mode FROM exchanges e WHERE e.attempt_id = a.id LIMIT 1), r.mode) AS mode,
                   r.git_revision, a.started_at, a.duration_ms, a.outcome, a.exit_code, a.error,
                   (SELECT count(*) FROM exchanges e WHERE e.attempt_id = a.id)::int AS exchanges,
                   (SELECT count(*) FROM exchanges e WHERE e.attempt_id = a.id AND NOT e.matched)::int AS unmatched
            FROM attempts a JOIN runs r ON r.id = a.run_id
            WHERE a.project = \(project) AND a.scenario_id = \(scenarioID) AND a.outcome IS NOT NULL
            ORDER BY a.finished_at DESC, a.id DESC
            LIMIT \(limit)
            """,
            logger: database.logger
        )
        var ids: [Int64] = []
        var attempts: [AttemptHistory] = []
        for try await row in rows {
            let column = NamedColumns(row)
            ids.append(try column("id"))
            attempts.append(
                AttemptHistory(
                    runID: try column("run_id"), attempt: try column("attempt"), mode: try column("mode"),
                    gitRevision: try column("git_revision"), startedAt: try column("started_at"),
                    durationMs: try column("duration_ms"), outcome: try column("outcome"),
                    exitCode: try column("exit_code"),
                    error: try column("error"), exchanges: try column("exchanges"),
                    unmatchedExchanges: try column("unmatched"),
                    steps: []
                ))
        }
        guard !ids.isEmpty else { return [] }
        let stepRows = try await database.client.query(
            """
            SELECT s.attempt_id, s.position, s.keyword, s.name, s.status, s.started_at,
                   (extract(epoch FROM s.finished_at - s.started_at) * 1000)::bigint AS duration_ms, s.error,
                   (SELECT count(*) FROM exchange_log x WHERE x.attempt_id = s.attempt_id AND x.step = s.position)::int
                       AS exchanges
            FROM steps s WHERE s.attempt_id = ANY(\(ids))
            ORDER BY s.attempt_id, s.position
            """,
            logger: database.logger
        )
        let index = Dictionary(uniqueKeysWithValues: ids.enumerated().map { ($1, $0) })
        for try await row in stepRows {
            let column = NamedColumns(row)
            guard let at = index[try column("attempt_id")] else { continue }
            attempts[at].steps.append(
                StepHistory(
                    position: try column("position"), keyword: try column("keyword"), name: try column("name"),
                    status: StepStatus(rawValue: try column("status")), startedAt: try column("started_at"),
                    durationMs: try column("duration_ms"), error: try column("error"),
                    exchanges: try column("exchanges")
                ))
        }
        return attempts
    }
}
