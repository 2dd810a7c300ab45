import Foundation
import Logging
import OrchestrateModel
import OrchestrateTesting
import PostgresNIO
import Store
import Testing

@Suite("Network log writer", .timeLimit(.minutes(2)))
struct NetworkLogWriterTests {
    static func exchange(_ sequence: Int, step: Int? = nil) -> Exchange {
        Exchange(
            sequence: sequence, mode: .replay, matched: true, host: "api.test", method: "GET",
            url: "https://api.test/v1/\(sequence)",
            requestHeaders: [.init(name: "accept", value: "a\tb"), .init(name: "x-odd", value: #"q"\ü\#u{1}"#)],
            requestBody: [0, 1, 2, 0x5c],
            status: 200, responseHeaders: [], responseBody: Array("line\none \"q\" \\ ü".utf8), startedAt: Self.moment,
            durationMicroseconds: 12, stepPosition: step
        )
    }

    static let moment = Date(timeIntervalSince1970: 1_795_000_000.123456)

    static func count(_ table: String, in database: Database) async throws -> Int {
        let rows = try await database.client.query(
            "SELECT count(*)::int FROM \(unescaped: table)", logger: Logger(label: "test"))
        for try await count in rows.decode(Int.self) { return count }
        return -1
    }

    /// A writer with its spool in a temporary folder, over a fresh database with one running attempt (whose id it
    /// gets).
    func withWriter(
        memoryLimit: Int = 64 << 20, batchRows: Int = 256, chunkRows: Int = 64,
        _ body: @Sendable (NetworkLogWriter, Database, Int64, TemporaryDirectory) async throws -> Void
    ) async throws {
        try await TemporaryDirectory.with { directory in
            try await withTestDatabase { database in
                let writer = NetworkLogWriter(
                    store: ExchangeStore(database: database), spoolDirectory: directory.file("spool"),
                    memoryLimit: memoryLimit, batchRows: batchRows, chunkRows: chunkRows,
                    logger: Logger(label: "test"))
                try await body(writer, database, try await makeRunningAttempt(in: database), directory)
            }
        }
    }

    @Test(
        "a database that is slow (a table lock) slows no append; rows beyond the memory bound are spooled; nothing is lost"
    )
    func slowDatabase() async throws {
        try await withWriter(memoryLimit: 4_000) { writer, database, attemptID, directory in
            writer.start(interval: .milliseconds(20))
            // Another session holds the table: every write waits.
            try await database.client.withConnection { blocker in
                try await blocker.query("BEGIN", logger: Logger(label: "test"))
                try await blocker.query("LOCK TABLE exchanges IN ACCESS EXCLUSIVE MODE", logger: Logger(label: "test"))
                let clock = ContinuousClock.now
                for sequence in 1...1_000 { writer.append(Self.exchange(sequence), attemptID: attemptID) }
                writer.append(
                    Step(
                        position: 1, keyword: "Given ", name: "a step", status: "passed", startedAt: Date(),
                        finishedAt: Date()),
                    attemptID: attemptID)
                // Appending never waits for the database (held by the lock until the test ends): it returns, slow
                // machine or not.
                #expect(ContinuousClock.now - clock < .seconds(30))
                #expect(writer.spooled >= 900)
                // The loop may already be sending the spool (moved aside while the write waits for the lock).
                let spool = directory.file("spool/exchanges-v5-\(getpid()).copy")
                #expect(
                    FileManager.default.fileExists(atPath: spool)
                        || FileManager.default.fileExists(atPath: spool + ".sending"))
                // The writer waits for the lock before the table is let go.
                #expect(
                    try await eventually {
                        let rows = try await database.client.query(
                            "SELECT count(*)::int FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND pid <> pg_backend_pid()",
                            logger: Logger(label: "test")
                        )
                        for try await waiting in rows.decode(Int.self) { return waiting > 0 }
                        return false
                    })
                try await blocker.query("COMMIT", logger: Logger(label: "test"))
            }
            #expect(await writer.close() == 0)
            #expect(try await Self.count("exchanges", in: database) == 1_000)
            #expect(try await Self.count("steps", in: database) == 1)
            #expect(writer.spooled == 0)
            // 1,000 exchanges with two distinct bodies and one header list: each stored once.
            #expect(try await Self.count("payloads", in: database) == 3)
            let rows = try await database.client.query(
                """
                SELECT request_body, convert_from(response_body, 'UTF8'), request_headers->1->>'value', request_headers->0->>'value',
                       extract(epoch FROM started_at)::float8
                FROM exchange_log WHERE sequence = 7
                """,
                logger: Logger(label: "test")
            )
            for try await (request, response, odd, accept, epoch) in rows.decode(
                (ByteBuffer, String, String, String, Double).self)
            {
                #expect(Array(buffer: request) == [0, 1, 2, 0x5c] && response == "line\none \"q\" \\ ü")
                #expect(odd == #"q"\ü\#u{1}"# && accept == "a\tb")
                #expect(abs(epoch - Self.moment.timeIntervalSince1970) < 0.000_002)
            }
        }
    }

    @Test("closing writes what waits at once, without sitting out the pause between batches")
    func closeCutsThePauseShort() async throws {
        // Typed throwing: its only `try` is inside a macro, which closure inference does not see.
        try await withWriter { (writer, database, attemptID, _) async throws in
            writer.start(interval: .seconds(90))
            writer.append(Self.exchange(1), attemptID: attemptID)
            let start = ContinuousClock.now
            #expect(await writer.close() == 0)
            #expect(ContinuousClock.now - start < .seconds(30))
            #expect(try await Self.count("exchanges", in: database) == 1)
        }
    }

    @Test("a full batch is written without waiting out the pause; fewer rows wait for it")
    func fullBatchGoesAtOnce() async throws {
        try await withWriter(batchRows: 10) { (writer, database, attemptID, _) async throws in
            writer.start(interval: .seconds(90))
            for sequence in 1...9 { writer.append(Self.exchange(sequence), attemptID: attemptID) }
            #expect(await holds(for: .milliseconds(500)) { writer.written == 0 }, "nine rows wait for the pause")
            writer.append(Self.exchange(10), attemptID: attemptID)
            #expect(
                await eventually(timeout: .seconds(30)) { writer.written == 10 }, "the tenth fills the batch: all go")
            #expect(try await Self.count("exchanges", in: database) == 10)
            #expect(await writer.close() == 0)
        }
    }

    @Test("a steady flow of exchanges streams into one transaction at a time, chunk by chunk, not one per chunk")
    func exchangesStream() async throws {
        try await withWriter(chunkRows: 10) { writer, database, attemptID, _ in
            writer.start(interval: .milliseconds(500))
            // 100 chunks of 10 exchanges, one every 5 ms.
            try await paced(every: .milliseconds(5), times: 100) { chunk in
                for row in 1...10 { writer.append(Self.exchange(chunk * 10 + row), attemptID: attemptID) }
            }
            #expect(await writer.close() == 0)
            #expect(try await Self.count("exchanges", in: database) == 1_000)
            // Each transaction stamps its rows with its id: a transaction per chunk would make 100.
            let rows = try await database.client.query(
                "SELECT count(DISTINCT xmin::text)::int FROM exchanges", logger: Logger(label: "test"))
            // On a loaded machine a chunk may come late and end its transaction; still, chunks share transactions.
            for try await transactions in rows.decode(Int.self) { #expect(transactions < 100) }
        }
    }

    @Test(
        "connections the server ends part-way through writes, again and again: the process goes on, and every exchange is stored exactly once"
    )
    func connectionsEndedMidWrite() async throws {
        try await withWriter(chunkRows: 10) { writer, database, attemptID, _ in
            let logger = Logger(label: "test")
            writer.start(interval: .milliseconds(50))
            // Every other connection to the database (the writer's among them) ended by the server, every 10 ms, from
            // a pool of one connection of the test's own. A query whose connection the server ended may never be
            // answered (postgres-nio): each is given up on after a while.
            let endings = Task {
                try await Database.with(database.endpoint, logger: logger, maximumConnections: 1, migrate: false) {
                    terminator in
                    try await paced(every: .milliseconds(10), times: 200) { _ in
                        _ = try? await abandoning(after: .seconds(5)) {
                            try await terminator.client.query(
                                """
                                SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                                WHERE datname = current_database() AND pid <> pg_backend_pid()
                                """, logger: logger)
                        }
                    }
                }
            }
            try await paced(every: .milliseconds(1), times: 2_000) { sequence in
                writer.append(Self.exchange(sequence), attemptID: attemptID)
            }
            try await endings.value
            // The server takes connections again: what failed meanwhile waits in the spool until a write takes it.
            // Each write is given up on after a while (one whose connection the server ended may never be answered),
            // as the writer's own flushes are.
            #expect(
                await eventually(timeout: .seconds(60)) { await writer.flush(within: .seconds(5)) },
                "\(writer.spooled) rows spooled")
            #expect(await writer.close() == 0)
            let counts = try await Database.with(database.endpoint, logger: logger, maximumConnections: 1) { fresh in
                try await fresh.client.query(
                    "SELECT count(*)::int, count(DISTINCT sequence)::int FROM exchanges", logger: logger
                ).collect().map { try $0.decode((Int, Int).self) }
            }
            #expect(counts.count == 1 && counts[0] == (2_000, 2_000), "\(counts)")
        }
    }

    @Test(
        "writes that fail are spooled and sent once the database takes them again; a later writer takes over a spool left behind"
    )
    func unavailableDatabase() async throws {
        try await withWriter { writer, database, attemptID, directory in
            let logger = Logger(label: "test")
            try await database.client.query("ALTER TABLE exchanges RENAME TO exchanges_away", logger: logger)
            for sequence in 1...50 { writer.append(Self.exchange(sequence, step: 1), attemptID: attemptID) }
            #expect(await writer.flush() == false)
            #expect(writer.spooled == 50)
            for sequence in 51...60 { writer.append(Self.exchange(sequence, step: 1), attemptID: attemptID) }
            #expect(await writer.flush() == false)
            #expect(writer.spooled == 60)
            try await database.client.query("ALTER TABLE exchanges_away RENAME TO exchanges", logger: logger)
            #expect(await writer.flush())
            #expect(try await Self.count("exchanges", in: database) == 60)
            // The payloads waited in the spool with their exchanges.
            #expect(try await Self.count("payloads", in: database) == 3)

            // A spool whose process is gone (pid 999999 does not run) is taken over and written; one in an
            // older layout is left alone (its columns are not the table's any more).
            let orphan = directory.file("spool/exchanges-v5-999999.copy")
            let older = directory.file("spool/exchanges-999998.copy")
            try "1\t1\treplay\n".write(toFile: older, atomically: true, encoding: .utf8)
            try await database.client.query("ALTER TABLE exchanges RENAME TO exchanges_away", logger: logger)
            writer.append(Self.exchange(61), attemptID: attemptID)
            #expect(await writer.flush() == false)
            try FileManager.default.moveItem(
                atPath: directory.file("spool/exchanges-v5-\(getpid()).copy"), toPath: orphan)
            try await database.client.query("ALTER TABLE exchanges_away RENAME TO exchanges", logger: logger)
            let successor = NetworkLogWriter(
                store: ExchangeStore(database: database), spoolDirectory: directory.file("spool"), logger: logger)
            successor.start(interval: .milliseconds(20))
            #expect(await successor.close() == 0)
            #expect(try await Self.count("exchanges", in: database) == 61)
            #expect(!FileManager.default.fileExists(atPath: orphan))
            #expect(FileManager.default.fileExists(atPath: older))
        }
    }
}
