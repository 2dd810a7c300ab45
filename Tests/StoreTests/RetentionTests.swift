import Foundation
import OrchestrateModel
import OrchestrateTesting
import PostgresNIO
import Store
import Testing

/// docs/database.md's statement that removes old runs, run as the page gives it.
@Suite("Keeping history")
struct RetentionTests {
    static let page = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/database.md")

    /// The first `sql` block after "Keeping history" on the page.
    static func statement() throws -> String {
        let text = try String(contentsOf: page, encoding: .utf8)
        let section = try #require(text.range(of: "**Keeping history.**"), "docs/database.md has no Keeping history")
        let rest = text[section.upperBound...]
        let open = try #require(rest.range(of: "```sql\n"), "no sql block after Keeping history")
        let close = try #require(rest[open.upperBound...].range(of: "```"))
        return String(rest[open.upperBound..<close.lowerBound])
    }

    @Test(
        "the page's statement removes a run older than 90 days with its tests, attempts, exchanges, steps, kept files and members, and leaves a newer run and the rollups as they were"
    )
    func removeOldRuns() async throws {
        let sql = try Self.statement()
        try await withTestDatabase { database in
            let runs = RunStore(database: database)
            let queue = AttemptQueue(database: database)
            var attemptsOf: [UUID: [Int64]] = [:]
            let (old, recent) = (try await plan(database, count: 2), try await plan(database, count: 2))
            for runID in [old, recent] {
                try await runs.join(runID, member: "test/1", host: "test", node: "1", workers: 1)
                let worker = WorkerIdentity(host: "test", pid: 1, slot: 1)
                while let claimed = try await queue.claim(runID: runID, worker: worker, port: 1) {
                    attemptsOf[runID, default: []].append(claimed.id)
                    _ = try await queue.complete(claimed, result: passed())
                    try await storeExchanges(madeBy: [claimed.id], on: database)
                    try await database.client.query(
                        """
                        INSERT INTO steps (attempt_id, position, name, status, started_at)
                        VALUES (\(claimed.id), 1, 'Given a cart', 'passed', now())
                        """)
                    try await database.client.query(
                        "INSERT INTO attempt_files (attempt_id, path, bytes) VALUES (\(claimed.id), 'screen.png', 3)")
                }
                try await runs.setState(runID, .finished)
                try await runs.rollUp(runID)
            }
            try await database.client.query(
                "UPDATE runs SET created_at = now() - interval '100 days' WHERE id = \(old)")
            func count(_ sql: String) async throws -> Int64 {
                var total: Int64 = 0
                for try await value in try await database.client.query(PostgresQuery(unsafeSQL: sql)).decode(
                    Int64.self)
                {
                    total = value
                }
                return total
            }
            /// Rows of each table that belong to `runID`, its attempts named by id (they are gone once deleted).
            func rows(of runID: UUID) async throws -> [String: Int64] {
                let run = "'\(runID.uuidString.lowercased())'"
                let ids = "ARRAY[\(attemptsOf[runID, default: []].map(String.init).joined(separator: ","))]::bigint[]"
                var counts: [String: Int64] = [:]
                counts["runs"] = try await count("SELECT count(*) FROM runs WHERE id = \(run)")
                for table in ["run_scenarios", "attempts", "run_members"] {
                    counts[table] = try await count("SELECT count(*) FROM \(table) WHERE run_id = \(run)")
                }
                for table in ["exchanges", "steps", "attempt_files"] {
                    counts[table] = try await count("SELECT count(*) FROM \(table) WHERE attempt_id = ANY(\(ids))")
                }
                return counts
            }
            let kept = try await rows(of: recent)
            #expect(kept.values.allSatisfy { $0 > 0 }, "the newer run has rows in every table: \(kept)")
            #expect(try await rows(of: old) == kept, "the two runs are alike before")
            let days = try await count("SELECT sum(attempts) FROM scenario_days")

            try await database.client.query(PostgresQuery(unsafeSQL: sql))
            let left = try await rows(of: old)
            #expect(left.values.allSatisfy { $0 == 0 }, "what is left of the old run: \(left)")
            #expect(try await rows(of: recent) == kept)
            #expect(try await count("SELECT sum(attempts) FROM scenario_days") == days, "the rollups keep counting")
        }
    }
}
