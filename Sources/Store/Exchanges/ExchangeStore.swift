import Logging
import NIOCore
import PostgresNIO

/// The network log: exchanges, their steps and payloads, written in batches with `COPY … FROM STDIN`.
package struct ExchangeStore: Sendable {
    let database: Database

    package init(database: Database) {
        self.database = database
    }

    /// Writes COPY text for each table in one transaction; each table's text is a sequence of chunks
    /// (rows may span chunks). Payloads go through a temporary table, as another writer may have
    /// stored the same payload already. A batch of one table's rows alone (a busy server's exchanges, nearly
    /// every batch) is one COPY, a transaction by itself: a round trip instead of four (committed as the server is
    /// set to; the embedded cluster runs with `synchronous_commit = off`).
    func write(_ tables: [(table: LogTable, chunks: [ByteBuffer])]) async throws {
        let logger = database.logger
        let filled = tables.filter { $0.chunks.contains { $0.readableBytes > 0 } }
        func copy(_ chunks: [ByteBuffer], of table: LogTable, into target: String, on connection: PostgresConnection) async throws {
            try await connection.copyFrom(table: target, columns: table.columns, logger: logger) { writer in
                for chunk in chunks where chunk.readableBytes > 0 { try await writer.write(chunk) }
            }
        }
        if filled.count == 1, let (table, chunks) = filled.first, table != .payloads {
            var rest = chunks.makeIterator()
            return try await stream(table) { rest.next() }
        }
        try await database.client.withTransaction(logger: logger) { connection in
            // Not worth a flush to disk per batch: a crash of the server may lose its last moments of log.
            try await connection.query("SET LOCAL synchronous_commit = off", logger: logger)
            for (table, chunks) in filled {
                guard table == .payloads else {
                    try await copy(chunks, of: table, into: table.rawValue, on: connection)
                    continue
                }
                try await connection.query("SET LOCAL client_min_messages = warning", logger: logger)
                try await connection.query(
                    "CREATE TEMPORARY TABLE IF NOT EXISTS incoming_payloads (digest bytea, content bytea) ON COMMIT DELETE ROWS",
                    logger: logger
                )
                try await copy(chunks, of: table, into: "incoming_payloads", on: connection)
                try await connection.query(
                    "INSERT INTO payloads (digest, content) SELECT digest, content FROM incoming_payloads ON CONFLICT DO NOTHING",
                    logger: logger
                )
            }
        }
    }
}

extension ExchangeStore {
    /// One COPY into `table`, fed chunk by chunk (rows may span chunks) until `next` gives nil, which ends and
    /// commits it.
    func stream(_ table: LogTable, next: () async throws -> ByteBuffer?) async throws {
        try await database.client.withConnection { connection in
            try await connection.copyFrom(table: table.rawValue, columns: table.columns, logger: database.logger) { writer in
                while let chunk = try await next() {
                    if chunk.readableBytes > 0 { try await writer.write(chunk) }
                }
            }
        }
    }
}
