import Logging
import NIOCore
import PostgresNIO

/// The network log: exchanges, their steps and payloads, written in batches. Rows come as COPY text (as encoded and
/// spooled) and go in as `INSERT … SELECT … FROM unnest(…)`, one statement per chunk (``CopyTextColumns``).
package struct ExchangeStore: Sendable {
    let database: Database

    package init(database: Database) {
        self.database = database
    }

    /// Writes COPY text for each table in one transaction; each table's text is a sequence of chunks (rows may span
    /// chunks). A payload another writer stored already is left as it is. A batch of one table's rows alone (a busy
    /// server's exchanges, nearly every batch) is one statement, a transaction by itself: a round trip instead of three.
    ///
    /// - Parameter deduplicate: rows sent before may be in the database already (a spool sent again after a write whose
    ///   end was not heard: the server may have committed it): only steps and exchanges not there yet are kept, so that
    ///   every row is written once.
    func write(_ tables: [(table: LogTable, chunks: [ByteBuffer])], deduplicate: Bool = false) async throws {
        let filled = tables.filter { $0.chunks.contains { $0.readableBytes > 0 } }
        if !deduplicate, filled.count == 1, let (table, chunks) = filled.first {
            var rest = chunks.makeIterator()
            return try await stream(table) { rest.next() }
        }
        try await database.withTransaction { connection in
            for (table, chunks) in filled {
                var rest = chunks.makeIterator()
                try await insert(table, deduplicate: deduplicate, on: connection) { rest.next() }
            }
        }
    }

    /// Rows into `table`, fed chunk by chunk (rows may span chunks) until `next` gives nil: one transaction, committed
    /// then. A single chunk is a single statement, without BEGIN and COMMIT.
    func stream(_ table: LogTable, next: () async throws -> ByteBuffer?) async throws {
        try await database.client.withConnection { connection in
            guard let first = try await next() else { return }
            guard let second = try await next() else {
                var only = [first].makeIterator()
                return try await insert(table, on: connection) { only.next() }
            }
            var pending: [ByteBuffer] = [first, second]
            try await connection.query("BEGIN", logger: database.logger)
            do {
                try await insert(table, on: connection) { pending.isEmpty ? try await next() : pending.removeFirst() }
                try await connection.query("COMMIT", logger: database.logger)
            } catch {
                // A connection that still answers goes back to the pool out of the transaction.
                _ = try? await connection.query("ROLLBACK", logger: database.logger)
                throw error
            }
        }
    }

    /// Inserts the rows of the chunks `next` gives, a statement per chunk.
    nonisolated(nonsending) private func insert(
        _ table: LogTable, deduplicate: Bool = false, on connection: PostgresConnection,
        next: () async throws -> ByteBuffer?
    ) async throws {
        let sql = table.insert(deduplicate: deduplicate)
        var rows = CopyTextColumns(count: table.columns.count)
        while let chunk = try await next() {
            try rows.read(chunk)
            guard rows.rows > 0 else { continue }
            var binds = PostgresBindings(capacity: table.columns.count)
            for column in rows.take() { binds.append(column) }
            try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: database.logger)
        }
        if rows.holdsPartialRow {
            throw StoreError(.unreadableRows, "the network log's rows for \(table.rawValue) end in the middle of a row")
        }
    }
}
