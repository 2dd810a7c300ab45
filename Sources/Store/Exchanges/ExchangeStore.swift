import Foundation
import Logging
import NIOCore
import OrchestrateModel
import PostgresNIO

/// The network log: exchanges of mock servers, written in batches with `COPY … FROM STDIN`.
public struct ExchangeStore: Sendable {
    let database: Database

    public init(database: Database) {
        self.database = database
    }

    static let columns = [
        "attempt_id", "sequence", "mode", "matched", "host", "method", "url", "request_headers", "request_body",
        "status", "response_headers", "response_body", "started_at", "duration_us", "note",
    ]

    /// Writes a batch in one COPY (all or nothing).
    public func copy(_ batch: [(attemptID: Int64, exchange: Exchange)]) async throws {
        guard !batch.isEmpty else { return }
        var buffer = ByteBuffer()
        let encoder = JSONEncoder()
        for (attemptID, exchange) in batch { Self.appendRow(attemptID, exchange, encoder: encoder, to: &buffer) }
        try await database.client.withConnection { connection in
            try await connection.copyFrom(table: "exchanges", columns: Self.columns, logger: database.logger) { writer in
                try await writer.write(buffer)
            }
        }
    }

    // MARK: COPY text format

    static func appendRow(_ attemptID: Int64, _ exchange: Exchange, encoder: JSONEncoder, to buffer: inout ByteBuffer) {
        func headers(_ list: [Exchange.Header]) -> String {
            (try? encoder.encode(list)).map { String(decoding: $0, as: UTF8.self) } ?? "[]"
        }
        let fields: [String?] = [
            "\(attemptID)", "\(exchange.sequence)", exchange.mode.rawValue, exchange.matched ? "t" : "f", exchange.host,
            exchange.method, exchange.url, headers(exchange.requestHeaders), byteaHex(exchange.requestBody),
            exchange.status.map(String.init), headers(exchange.responseHeaders), byteaHex(exchange.responseBody),
            exchange.startedAt.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)),
            "\(exchange.durationMicroseconds)", exchange.note,
        ]
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
