import Crypto
import Foundation
import Logging
import NIOCore
import OrchestrateModel
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

/// The tables of the network log, in the order a batch writes them.
enum LogTable: String, CaseIterable, Sendable {
    case payloads, steps, exchanges

    var columns: [String] {
        switch self {
        case .payloads: ["digest", "content"]
        case .steps: ["attempt_id", "position", "keyword", "name", "status", "started_at", "finished_at", "error"]
        case .exchanges: [
            "attempt_id", "sequence", "mode", "matched", "host", "method", "url", "request_headers_digest", "request_body_digest",
            "status", "response_headers_digest", "response_body_digest", "started_at", "duration_us", "note", "step_position",
        ]
        }
    }
}

/// Rows in PostgreSQL's COPY text format, ready to send or to spool to a file, one buffer per table.
/// Encoded straight into the buffers (no Foundation formatting, no intermediate strings): this runs for
/// every exchange a mock server answers.
struct CopyRows {
    private var payloads = ByteBuffer()
    private var steps = ByteBuffer()
    private var exchanges = ByteBuffer()
    /// Steps and exchanges (the rows callers count; payloads go with their exchanges).
    private(set) var count = 0

    /// Whether the rows held are exchanges alone (or none).
    var exchangesOnly: Bool { payloads.readableBytes == 0 && steps.readableBytes == 0 }

    /// The COPY text held, in bytes.
    var bytes: Int { payloads.readableBytes + steps.readableBytes + exchanges.readableBytes }

    subscript(table: LogTable) -> ByteBuffer {
        switch table {
        case .payloads: payloads
        case .steps: steps
        case .exchanges: exchanges
        }
    }

    /// The exchange, and the payloads (bodies, header lists) it names that `catalog` has not seen yet.
    mutating func append(_ exchange: Exchange, attemptID: Int64, catalog: inout PayloadCatalog) {
        let requestHeaders = payload(HeaderList.json(exchange.requestHeaders), catalog: &catalog)
        let requestBody = payload(exchange.requestBody, catalog: &catalog)
        let responseHeaders = payload(HeaderList.json(exchange.responseHeaders), catalog: &catalog)
        let responseBody = payload(exchange.responseBody, catalog: &catalog)
        RowWriter.append(to: &exchanges) { row in
            row.integer(attemptID)
            row.integer(Int64(exchange.sequence))
            row.text(exchange.mode.rawValue)
            row.text(exchange.matched ? "t" : "f")
            row.text(exchange.host)
            row.text(exchange.method)
            row.text(exchange.url)
            row.bytea(requestHeaders)
            row.bytea(requestBody)
            row.integer(exchange.status.map(Int64.init))
            row.bytea(responseHeaders)
            row.bytea(responseBody)
            row.timestamp(exchange.startedAt)
            row.integer(exchange.durationMicroseconds)
            row.text(exchange.note)
            row.integer(exchange.stepPosition.map(Int64.init))
        }
        count += 1
    }

    /// The payload's digest (nil when empty); a payload new to the catalog gets its row.
    private mutating func payload(_ content: [UInt8], catalog: inout PayloadCatalog) -> [UInt8]? {
        guard !content.isEmpty else { return nil }
        let (digest, isNew) = catalog.digest(of: content)
        if isNew {
            RowWriter.append(to: &payloads) { row in
                row.bytea(digest)
                row.bytea(content)
            }
        }
        return digest
    }

    mutating func append(_ step: Step, attemptID: Int64) {
        RowWriter.append(to: &steps) { row in
            row.integer(attemptID)
            row.integer(Int64(step.position))
            row.text(step.keyword)
            row.text(step.name)
            row.text(step.status)
            row.timestamp(step.startedAt)
            row.timestamp(step.finishedAt)
            row.text(step.error)
        }
        count += 1
    }

    /// `other`'s rows after these.
    mutating func append(contentsOf other: CopyRows) {
        var (morePayloads, moreSteps, moreExchanges) = (other.payloads, other.steps, other.exchanges)
        payloads.writeBuffer(&morePayloads)
        steps.writeBuffer(&moreSteps)
        exchanges.writeBuffer(&moreExchanges)
        count += other.count
    }
}

/// The payloads a writer has already put on their way to the database (in a batch or a spool file),
/// so that each distinct body or header list is written once, however often it is served.
///
/// A payload is named by the first 16 bytes of the SHA-256 of its bytes: a quarter less COPY text per exchange than
/// the whole digest, and parsing that text is most of PostgreSQL's work. Payloads stored before under 32-byte digests
/// stay as they are; a body seen again is stored once more under its shorter name. Hashing is skipped for a small
/// payload seen before (looked up by content) and for a larger array seen recently: the catalog keeps such arrays
/// alive, so the same storage address means the same bytes (a replayed response body is one array, served over and
/// over).
struct PayloadCatalog {
    /// Bytes as a key, hashed in one pass: an array of bytes hashes itself a byte at a time, which showed in profiles of
    /// a mock server logging tens of thousands of exchanges a second.
    private struct Bytes: Hashable {
        let bytes: [UInt8]

        func hash(into hasher: inout Hasher) {
            bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }

    private var sent: Set<Bytes> = []
    /// Arrays seen recently, by storage address.
    private var recent: [UnsafeRawPointer: (body: [UInt8], digest: [UInt8])] = [:]
    /// Small payloads seen (header lists, short bodies), by content: a lookup instead of a hash.
    private var small: [Bytes: [UInt8]] = [:]
    private let limit: Int

    init(limit: Int = 100_000) {
        self.limit = limit
    }

    /// The payload's digest, and whether the catalog saw it for the first time.
    mutating func digest(of payload: [UInt8]) -> (digest: [UInt8], isNew: Bool) {
        let address = payload.withUnsafeBytes { $0.baseAddress }
        if let address, let known = recent[address], known.body.count == payload.count {
            return (known.digest, false)
        }
        let isSmall = payload.count <= 512
        if isSmall, let known = small[Bytes(bytes: payload)] { return (known, false) }
        let digest = Array(SHA256.hash(data: payload).prefix(16))
        if isSmall {
            if small.count >= 4096 { small.removeAll(keepingCapacity: true) }
            small[Bytes(bytes: payload)] = digest
        } else {
            if recent.count >= 1024 { recent.removeAll(keepingCapacity: true) }
            if let address { recent[address] = (payload, digest) }
        }
        // Forgetting only costs a payload written again (the insert skips those already there).
        if sent.count >= limit { sent.removeAll(keepingCapacity: true) }
        return (digest, sent.insert(Bytes(bytes: digest)).inserted)
    }
}

/// One row of COPY text: fields separated by tabs, `\N` for NULL, backslash, tab, newline and carriage
/// return escaped (NUL, which text columns cannot hold, dropped).
struct RowWriter {
    private var buffer: ByteBuffer
    private var first = true

    private init() {
        buffer = ByteBuffer()
    }

    /// Appends one row, its fields written by `fields`. The row writer holds the buffer meanwhile (and
    /// the caller an empty one): a buffer referenced twice would be copied whole on the row's first write.
    static func append(to buffer: inout ByteBuffer, _ fields: (inout RowWriter) -> Void) {
        var row = RowWriter()
        swap(&row.buffer, &buffer)
        fields(&row)
        row.buffer.writeInteger(UInt8(ascii: "\n"))
        swap(&row.buffer, &buffer)
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
        if value < 0 { buffer.writeInteger(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var width = 1
        var scale: UInt64 = 10
        while width < 20, magnitude >= scale {
            width += 1
            scale = scale.multipliedReportingOverflow(by: 10).partialValue
        }
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: width) { target in
            for index in stride(from: width - 1, through: 0, by: -1) {
                target[index] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            }
            return width
        }
    }

    mutating func text(_ value: String?) {
        separate()
        guard var value else { return null() }
        value.withUTF8 { bytes in
            // Worst case: every byte escaped into two.
            fill(bytes, worstCase: 2) { byte, target, at in
                switch byte {
                case UInt8(ascii: "\\"): return put("\\\\", target, at)
                case UInt8(ascii: "\t"): return put("\\t", target, at)
                case UInt8(ascii: "\n"): return put("\\n", target, at)
                case UInt8(ascii: "\r"): return put("\\r", target, at)
                case 0: return at
                default:
                    target[at] = byte
                    return at + 1
                }
            }
        }
    }

    /// bytea input, escaped for COPY: bodies that are mostly printable ASCII (JSON, text) in bytea's escape
    /// form (printable bytes as they are, so the server parses half as much as hex), others as hex.
    mutating func bytea(_ bytes: [UInt8]?) {
        separate()
        guard let bytes else { return null() }
        bytes.withUnsafeBufferPointer { bytes in
            var unprintable = 0
            for byte in bytes where byte < 0x20 || byte > 0x7e { unprintable += 1 }
            guard unprintable * 8 > bytes.count else {
                // `\\ooo` (five bytes) for an unprintable byte, `\\\\` for a backslash.
                fill(bytes, worstCase: 5) { byte, target, at in
                    switch byte {
                    case UInt8(ascii: "\\"): return put("\\\\\\\\", target, at)
                    case 0x20...0x7e:
                        target[at] = byte
                        return at + 1
                    default:
                        target[at] = UInt8(ascii: "\\")
                        target[at + 1] = UInt8(ascii: "\\")
                        target[at + 2] = UInt8(ascii: "0") + (byte >> 6)
                        target[at + 3] = UInt8(ascii: "0") + (byte >> 3 & 7)
                        target[at + 4] = UInt8(ascii: "0") + (byte & 7)
                        return at + 5
                    }
                }
                return
            }
            buffer.writeStaticString("\\\\x")
            fill(bytes, worstCase: 2) { byte, target, at in
                target[at] = hexDigit(byte >> 4)
                target[at + 1] = hexDigit(byte & 0x0f)
                return at + 2
            }
        }
    }

    /// Writes `bytes` through `encode` (byte, target, offset → next offset) straight into the buffer,
    /// reserving `worstCase` output bytes per input byte.
    private mutating func fill(
        _ bytes: UnsafeBufferPointer<UInt8>, worstCase: Int,
        _ encode: (UInt8, UnsafeMutableRawBufferPointer, Int) -> Int
    ) {
        guard !bytes.isEmpty else { return }
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: bytes.count * worstCase) { target in
            var at = 0
            for byte in bytes { at = encode(byte, target, at) }
            return at
        }
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
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: width) { target in
            for index in stride(from: width - 1, through: 0, by: -1) {
                target[index] = UInt8(ascii: "0") + UInt8(value % 10)
                value /= 10
            }
            return width
        }
    }

}

/// A header list as stored: a JSON array of {"name", "value"} objects, as compact as `jsonb` reads it.
enum HeaderList {
    static func json(_ headers: [Exchange.Header]) -> [UInt8] {
        guard !headers.isEmpty else { return [] }
        var json: [UInt8] = [UInt8(ascii: "[")]
        json.reserveCapacity(headers.reduce(2) { $0 + $1.name.utf8.count + $1.value.utf8.count + 24 })
        for (index, header) in headers.enumerated() {
            if index > 0 { json.append(UInt8(ascii: ",")) }
            json.append(contentsOf: #"{"name":"#.utf8)
            string(header.name, into: &json)
            json.append(contentsOf: #","value":"#.utf8)
            string(header.value, into: &json)
            json.append(UInt8(ascii: "}"))
        }
        json.append(UInt8(ascii: "]"))
        return json
    }

    private static func string(_ text: String, into json: inout [UInt8]) {
        json.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                json.append(UInt8(ascii: "\\"))
                json.append(byte)
            case 0..<0x20:
                json.append(contentsOf: "\\u00".utf8)
                json.append(hexDigit(byte >> 4))
                json.append(hexDigit(byte & 0x0f))
            default:
                json.append(byte)
            }
        }
        json.append(UInt8(ascii: "\""))
    }
}

/// Copies a short literal into `target` at `offset`; returns the offset after it.
private func put(_ literal: StaticString, _ target: UnsafeMutableRawBufferPointer, _ offset: Int) -> Int {
    let count = literal.utf8CodeUnitCount
    UnsafeMutableRawBufferPointer(rebasing: target[offset..<offset + count])
        .copyMemory(from: UnsafeRawBufferPointer(start: literal.utf8Start, count: count))
    return offset + count
}

private func hexDigit(_ nibble: UInt8) -> UInt8 {
    nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") - 10 + nibble
}
