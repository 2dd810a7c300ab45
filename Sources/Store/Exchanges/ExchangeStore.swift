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

    /// Writes COPY text of exchanges and steps in one transaction; each part is a sequence of chunks
    /// (rows may span chunks).
    func write(exchanges: some Sequence<ByteBuffer>, steps: some Sequence<ByteBuffer>) async throws {
        try await database.client.withTransaction(logger: database.logger) { connection in
            // Not worth a flush to disk per batch: a crash of the server may lose its last moments of log.
            try await connection.query("SET LOCAL synchronous_commit = off", logger: database.logger)
            for (table, columns, chunks) in [("steps", Self.stepColumns, Array(steps)), ("exchanges", Self.exchangeColumns, Array(exchanges))]
            where chunks.contains(where: { $0.readableBytes > 0 }) {
                try await connection.copyFrom(table: table, columns: columns, logger: database.logger) { writer in
                    for chunk in chunks where chunk.readableBytes > 0 { try await writer.write(chunk) }
                }
            }
        }
    }
}

/// Rows in PostgreSQL's COPY text format, ready to send or to spool to a file. Written byte by byte:
/// this runs for every exchange a mock server answers.
struct CopyRows {
    var exchanges = ByteBuffer()
    var steps = ByteBuffer()
    var count = 0

    mutating func append(_ exchange: Exchange, attemptID: Int64) {
        var row = RowWriter(buffer: exchanges)
        row.integer(attemptID)
        row.integer(Int64(exchange.sequence))
        row.text(exchange.mode.rawValue)
        row.text(exchange.matched ? "t" : "f")
        row.text(exchange.host)
        row.text(exchange.method)
        row.text(exchange.url)
        row.headers(exchange.requestHeaders)
        row.bytea(exchange.requestBody)
        row.integer(exchange.status.map(Int64.init))
        row.headers(exchange.responseHeaders)
        row.bytea(exchange.responseBody)
        row.timestamp(exchange.startedAt)
        row.integer(exchange.durationMicroseconds)
        row.text(exchange.note)
        row.integer(exchange.stepPosition.map(Int64.init))
        exchanges = row.finish()
        count += 1
    }

    mutating func append(_ step: Step, attemptID: Int64) {
        var row = RowWriter(buffer: steps)
        row.integer(attemptID)
        row.integer(Int64(step.position))
        row.text(step.keyword)
        row.text(step.name)
        row.text(step.status)
        row.timestamp(step.startedAt)
        row.timestamp(step.finishedAt)
        row.text(step.error)
        steps = row.finish()
        count += 1
    }
}

/// One row of COPY text: fields separated by tabs, `\N` for NULL, backslash, tab, newline and carriage
/// return escaped (NUL, which text columns cannot hold, dropped).
struct RowWriter {
    private var buffer: ByteBuffer
    private var first = true

    init(buffer: ByteBuffer) {
        self.buffer = buffer
    }

    mutating func finish() -> ByteBuffer {
        buffer.writeInteger(UInt8(ascii: "\n"))
        return buffer
    }

    private mutating func separate() {
        if !first { buffer.writeInteger(UInt8(ascii: "\t")) }
        first = false
    }

    private mutating func null() {
        buffer.writeStaticString("\\N")
    }

    mutating func integer(_ value: Int64?) {
        separate()
        guard let value else { return null() }
        buffer.writeString(String(value))
    }

    mutating func text(_ value: String?) {
        separate()
        guard let value else { return null() }
        escaped(value.utf8)
    }

    private mutating func escaped(_ bytes: some Sequence<UInt8>) {
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\\"): buffer.writeStaticString("\\\\")
            case UInt8(ascii: "\t"): buffer.writeStaticString("\\t")
            case UInt8(ascii: "\n"): buffer.writeStaticString("\\n")
            case UInt8(ascii: "\r"): buffer.writeStaticString("\\r")
            case 0: break
            default: buffer.writeInteger(byte)
            }
        }
    }

    /// bytea input, escaped for COPY: bodies that are mostly printable ASCII (JSON, text) in bytea's escape
    /// form (printable bytes as they are, so the server parses half as much as hex), others as hex.
    mutating func bytea(_ bytes: [UInt8]) {
        separate()
        var unprintable = 0
        for byte in bytes where byte < 0x20 || byte > 0x7e { unprintable += 1 }
        guard unprintable * 8 > bytes.count else {
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "\\"): buffer.writeStaticString("\\\\\\\\")
                case 0x20...0x7e: buffer.writeInteger(byte)
                default:
                    buffer.writeStaticString("\\\\")
                    buffer.writeInteger(UInt8(ascii: "0") + (byte >> 6))
                    buffer.writeInteger(UInt8(ascii: "0") + (byte >> 3 & 7))
                    buffer.writeInteger(UInt8(ascii: "0") + (byte & 7))
                }
            }
            return
        }
        buffer.writeStaticString("\\\\x")
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: bytes.count * 2) { target in
            for (index, byte) in bytes.enumerated() {
                target[index * 2] = Self.hexDigits[Int(byte >> 4)]
                target[index * 2 + 1] = Self.hexDigits[Int(byte & 0x0f)]
            }
            return bytes.count * 2
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Headers as a JSON array of {"name", "value"} objects.
    mutating func headers(_ headers: [Exchange.Header]) {
        separate()
        buffer.writeInteger(UInt8(ascii: "["))
        for (index, header) in headers.enumerated() {
            if index > 0 { buffer.writeInteger(UInt8(ascii: ",")) }
            buffer.writeStaticString("{\"name\":")
            jsonString(header.name)
            buffer.writeStaticString(",\"value\":")
            jsonString(header.value)
            buffer.writeInteger(UInt8(ascii: "}"))
        }
        buffer.writeInteger(UInt8(ascii: "]"))
    }

    /// A JSON string, then escaped for COPY (a JSON backslash becomes two).
    private mutating func jsonString(_ text: String) {
        buffer.writeInteger(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): buffer.writeStaticString("\\\\\"")
            case UInt8(ascii: "\\"): buffer.writeStaticString("\\\\\\\\")
            case 0..<0x20:
                buffer.writeStaticString("\\\\u00")
                buffer.writeInteger(Self.hexDigits[Int(byte >> 4)])
                buffer.writeInteger(Self.hexDigits[Int(byte & 0x0f)])
            default: buffer.writeInteger(byte)
            }
        }
        buffer.writeInteger(UInt8(ascii: "\""))
    }

    /// `2026-11-22 10:57:28.123456+00`, computed, not formatted by Foundation (which is slow).
    mutating func timestamp(_ date: Date?) {
        separate()
        guard let date else { return null() }
        let microseconds = Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
        var seconds = microseconds / 1_000_000
        var fraction = microseconds % 1_000_000
        if fraction < 0 {
            fraction += 1_000_000
            seconds -= 1
        }
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        digits(year, 4)
        buffer.writeInteger(UInt8(ascii: "-"))
        digits(month, 2)
        buffer.writeInteger(UInt8(ascii: "-"))
        digits(day, 2)
        buffer.writeInteger(UInt8(ascii: " "))
        digits(secondOfDay / 3600, 2)
        buffer.writeInteger(UInt8(ascii: ":"))
        digits(secondOfDay / 60 % 60, 2)
        buffer.writeInteger(UInt8(ascii: ":"))
        digits(secondOfDay % 60, 2)
        buffer.writeInteger(UInt8(ascii: "."))
        digits(fraction, 6)
        buffer.writeStaticString("+00")
    }

    private mutating func digits(_ value: Int64, _ width: Int) {
        var value = value
        var text = [UInt8](repeating: UInt8(ascii: "0"), count: width)
        for index in stride(from: width - 1, through: 0, by: -1) {
            text[index] = UInt8(ascii: "0") + UInt8(value % 10)
            value /= 10
        }
        buffer.writeBytes(text)
    }
}
