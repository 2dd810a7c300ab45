import Foundation
import OrchestrateModel
import OrchestrateTesting
import PostgresNIO
import Store
import Synchronization
import Testing

@Suite("Transactions: a connection that closes, a caller that gives up", .timeLimit(.minutes(3)))
struct TransactionTests {
    /// A server that ends a connection mid-statement fails the statement; postgres-nio's own transaction then writes a
    /// ROLLBACK that, once the connection's channel is torn down, is dropped without an answer — about every other
    /// time, the call waited for good (a queue round outlived the whole ORCHESTRATE_CONNECT_TIMEOUT so).
    @Test("a transaction whose connection the server ends mid-statement throws at once, sixty times in a row")
    func endedMidStatement() async throws {
        try await withTestDatabase { database in
            // The statements are ended from a pool of their own: the pool under test has a connection closing under it.
            try await Database.with(database.endpoint, logger: database.logger, migrate: false) { probe in
                try await endSixty(database, from: probe)
            }
            // The pool goes on with new connections.
            let one = try await database.client.query("SELECT 1", logger: database.logger).collect().count
            #expect(one == 1)
        }
    }

    /// A caller that gives up (a queue try out of its time cancels its work) still has its transaction ended: a
    /// connection handed back with its transaction open held the claim's locks, and the next caller's statements ran
    /// in that transaction — a round's CALL then failed, and a heartbeat was never committed.
    @Test(
        "a transaction whose caller is cancelled before it commits is committed, and its connection serves the next caller"
    )
    func cancelledBeforeCommit() async throws {
        try await withTestDatabase { database in
            try await database.client.query("CREATE TABLE kept (n integer)", logger: database.logger)
            // One connection, so that the next caller gets the one the cancelled caller gave back.
            try await Database.with(database.endpoint, logger: database.logger, maximumConnections: 1, migrate: false) {
                single in
                let written = Mutex(false)
                let transaction = Task {
                    try await single.withTransaction { connection in
                        try await connection.query("INSERT INTO kept VALUES (1)", logger: single.logger)
                        written.withLock { $0 = true }
                        // Ends when the caller is cancelled.
                        _ = await eventually(timeout: .seconds(30)) { Task.isCancelled }
                    }
                }
                #expect(await eventually(timeout: .seconds(30)) { written.withLock { $0 } })
                transaction.cancel()
                _ = await transaction.result
                // Seen from another pool: committed, not left open on the connection.
                let kept = try await database.client.query("SELECT count(*) FROM kept", logger: database.logger)
                    .collect().first?.decode(Int64.self)
                #expect(kept == 1)
                // The same connection, next: a procedure that commits (as a queue round does) runs outside a transaction.
                try await single.client.query(
                    "CREATE PROCEDURE commits() LANGUAGE plpgsql AS $$ BEGIN INSERT INTO kept VALUES (2); COMMIT; END $$",
                    logger: single.logger)
                try await single.client.query("CALL commits()", logger: single.logger)
                let both = try await database.client.query("SELECT count(*) FROM kept", logger: database.logger)
                    .collect().first?.decode(Int64.self)
                #expect(both == 2)
            }
        }
    }

    /// Sixty transactions ended mid-statement. A transaction may also fail before its statement starts, on a
    /// connection the pool handed out as it closed (the one ended just before): it then throws too, and is not counted.
    private func endSixty(_ database: Database, from probe: Database) async throws {
        var endedMidStatement = 0
        for round in 1...60 {
            let marker = "orchestrate-transaction-test-\(round)"
            let finished = Mutex(false)
            let transaction = Task {
                defer { finished.withLock { $0 = true } }
                try await abandoning(after: .seconds(20)) {
                    try await database.withTransaction { connection in
                        _ = try await connection.query(
                            PostgresQuery(unsafeSQL: "SELECT pg_sleep(30) /* \(marker) */"),
                            logger: database.logger)
                    }
                }
            }
            var ended = false
            let settled = await eventually(timeout: .seconds(20)) {
                let terminated = try? await probe.client.query(
                    """
                    SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                    WHERE query LIKE '%' || \(marker) || '%' AND pid <> pg_backend_pid()
                    """, logger: probe.logger
                ).collect().count
                ended = (terminated ?? 0) > 0
                return ended || finished.withLock { $0 }
            }
            #expect(settled, "round \(round): the statement never showed in pg_stat_activity, and the call did not end")
            if ended { endedMidStatement += 1 }
            switch await transaction.result {
            case .success: Issue.record("round \(round): a statement on an ended connection succeeded")
            case .failure(let error):
                #expect(
                    !(error is DeadlineExceeded), "round \(round): the transaction waited after its connection ended")
            }
        }
        #expect(endedMidStatement >= 30, "only \(endedMidStatement) of 60 statements were ended mid-statement")
    }
}
