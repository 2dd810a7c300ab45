import Logging
import NIOCore
import PostgresNIO

/// The network log: exchanges, their steps and payloads, written in batches with `COPY … FROM STDIN`.
package struct ExchangeStore: Sendable {
    let database: Database

    package init(database: Database) {
        self.database = database
    }

    /// Writes COPY text for each table in one transaction; each table's text is a sequence of chunks (rows may span
    /// chunks). Payloads go through a temporary table, as another writer may have stored the same payload already. A
    /// batch of one table's rows alone (a busy server's exchanges, nearly every batch) is one COPY, a transaction by
    /// itself: a round trip instead of four.
    ///
    /// - Parameter deduplicate: rows sent before may be in the database already (a spool sent again after a write whose
    ///   end was not heard: the server may have committed it): steps and exchanges also go through temporary tables,
    ///   and only those not there yet are kept, so that every row is written once.
    func write(_ tables: [(table: LogTable, chunks: [ByteBuffer])], deduplicate: Bool = false) async throws {
        let logger = database.logger
        let filled = tables.filter { $0.chunks.contains { $0.readableBytes > 0 } }
        func copy(
            _ chunks: [ByteBuffer], of table: LogTable, into target: String, on connection: PostgresConnection
        ) async throws {
            try await connection.copyFrom(table: target, columns: table.columns, logger: logger) { writer in
                for chunk in chunks where chunk.readableBytes > 0 {
                    try await Self.send(chunk, to: writer, on: connection)
                }
            }
        }
        if !deduplicate, filled.count == 1, let (table, chunks) = filled.first, table != .payloads {
            var rest = chunks.makeIterator()
            return try await stream(table) { rest.next() }
        }
        try await database.client.withTransaction(logger: logger) { connection in
            for (table, chunks) in filled {
                guard table == .payloads || deduplicate else {
                    try await copy(chunks, of: table, into: table.rawValue, on: connection)
                    continue
                }
                let incoming = "incoming_\(table.rawValue)"
                try await connection.query("SET LOCAL client_min_messages = warning", logger: logger)
                try await connection.query(
                    PostgresQuery(
                        unsafeSQL: """
                            CREATE TEMPORARY TABLE IF NOT EXISTS \(incoming) ON COMMIT DELETE ROWS AS
                            SELECT \(table.columns.joined(separator: ", ")) FROM \(table.rawValue) WITH NO DATA
                            """),
                    logger: logger
                )
                try await copy(chunks, of: table, into: incoming, on: connection)
                try await connection.query(PostgresQuery(unsafeSQL: table.keepNew(from: incoming)), logger: logger)
            }
        }
    }
}

extension ExchangeStore {
    /// One COPY into `table`, fed chunk by chunk (rows may span chunks) until `next` gives nil, which ends and
    /// commits it.
    func stream(_ table: LogTable, next: () async throws -> ByteBuffer?) async throws {
        try await database.client.withConnection { connection in
            try await connection.copyFrom(table: table.rawValue, columns: table.columns, logger: database.logger) {
                writer in
                while let chunk = try await next() {
                    if chunk.readableBytes > 0 { try await Self.send(chunk, to: writer, on: connection) }
                }
            }
        }
    }

    /// Writes a chunk of a COPY unless the connection has closed meanwhile (the server went away): postgres-nio 1.33
    /// stops the process with a precondition failure when a COPY chunk is written on a connection its state machine
    /// has closed, instead of failing the write. The check narrows that window to the hop onto the event loop.
    static func send(
        _ chunk: ByteBuffer, to writer: PostgresCopyFromWriter, on connection: PostgresConnection
    ) async throws {
        guard !connection.isClosed else {
            throw StoreError(.unreachable, "the database closed the connection during a write")
        }
        try await writer.write(chunk)
    }
}
