import Foundation
import Logging
import NIOCore
import OrchestrateModel
import PostgresNIO

/// The network log: exchanges and steps of mock servers, written in batches with `COPY … FROM STDIN`.
public struct ExchangeStore: Sendable {
    let database: Database

    public init(database: Database) {
        self.database = database
    }

    static let exchangeColumns = [
        "attempt_id", "sequence", "mode", "matched", "host", "method", "url", "request_headers", "request_body",
        "status", "response_headers", "response_body", "started_at", "duration_us", "note", "step_position",
    ]

    static let stepColumns = ["attempt_id", "position", "keyword", "name", "status", "started_at", "finished_at", "error"]

    /// Writes a batch of exchanges in one COPY (all or nothing).
    public func copy(_ batch: [(attemptID: Int64, exchange: Exchange)]) async throws {
        var rows = CopyRows()
        for (attemptID, exchange) in batch { rows.append(exchange, attemptID: attemptID) }
        try await write(exchanges: [rows.exchanges], steps: [])
    }

    /// Writes COPY text of exchanges and steps in one transaction; each part is a sequence of chunks
    /// (rows may span chunks).
    func write(exchanges: some Sequence<ByteBuffer>, steps: some Sequence<ByteBuffer>) async throws {
        try await database.client.withTransaction(logger: database.logger) { connection in
            for (table, columns, chunks) in [("steps", Self.stepColumns, Array(steps)), ("exchanges", Self.exchangeColumns, Array(exchanges))]
            where chunks.contains(where: { $0.readableBytes > 0 }) {
                try await connection.copyFrom(table: table, columns: columns, logger: database.logger) { writer in
                    for chunk in chunks where chunk.readableBytes > 0 { try await writer.write(chunk) }
                }
            }
        }
    }
}

/// Rows in PostgreSQL's COPY text format, ready to send or to spool to a file.
struct CopyRows {
    var exchanges = ByteBuffer()
    var steps = ByteBuffer()
    var count = 0
    private let encoder = JSONEncoder()

    mutating func append(_ exchange: Exchange, attemptID: Int64) {
        func headers(_ list: [Exchange.Header]) -> String {
            (try? encoder.encode(list)).map { String(decoding: $0, as: UTF8.self) } ?? "[]"
        }
        Self.appendRow([
            "\(attemptID)", "\(exchange.sequence)", exchange.mode.rawValue, exchange.matched ? "t" : "f", exchange.host,
            exchange.method, exchange.url, headers(exchange.requestHeaders), Self.byteaHex(exchange.requestBody),
            exchange.status.map(String.init), headers(exchange.responseHeaders), Self.byteaHex(exchange.responseBody),
            Self.timestamp(exchange.startedAt), "\(exchange.durationMicroseconds)", exchange.note, exchange.stepPosition.map(String.init),
        ], to: &exchanges)
        count += 1
    }

    mutating func append(_ step: Step, attemptID: Int64) {
        Self.appendRow([
            "\(attemptID)", "\(step.position)", step.keyword, step.name, step.status, Self.timestamp(step.startedAt),
            step.finishedAt.map(Self.timestamp), step.error,
        ], to: &steps)
        count += 1
    }

    static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    static func appendRow(_ fields: [String?], to buffer: inout ByteBuffer) {
        for (index, field) in fields.enumerated() {
            if index > 0 { buffer.writeInteger(UInt8(ascii: "\t")) }
            guard let field else {
                buffer.writeString("\\N")
                continue
            }
            writeEscaped(field, to: &buffer)
        }
        buffer.writeInteger(UInt8(ascii: "\n"))
    }

    /// `\x…` hex input for bytea (its backslash is escaped by the COPY text escaping).
    static func byteaHex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8](repeating: 0, count: 2 + bytes.count * 2)
        text[0] = UInt8(ascii: "\\")
        text[1] = UInt8(ascii: "x")
        for (index, byte) in bytes.enumerated() {
            text[2 + index * 2] = digits[Int(byte >> 4)]
            text[3 + index * 2] = digits[Int(byte & 0x0f)]
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// COPY text escaping: backslash, tab, newline and carriage return; NUL (which text columns cannot hold) dropped.
    static func writeEscaped(_ text: String, to buffer: inout ByteBuffer) {
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\\"): buffer.writeString("\\\\")
            case UInt8(ascii: "\t"): buffer.writeString("\\t")
            case UInt8(ascii: "\n"): buffer.writeString("\\n")
            case UInt8(ascii: "\r"): buffer.writeString("\\r")
            case 0: break
            default: buffer.writeInteger(byte)
            }
        }
    }
}
