import Crypto
import Foundation
import Logging
import NIOCore
import OrchestrateModel
import OrchestrateTesting
import PostgresNIO
import Store
import Testing

/// COPY text as the encoder writes it, and as PostgreSQL reads it back.
@Suite("COPY text encoding")
struct CopyTextEncoderTests {
    static func row(_ fields: (inout CopyTextEncoder) -> Void) -> String {
        var buffer = ByteBuffer()
        CopyTextEncoder.append(to: &buffer, fields)
        return String(decoding: buffer.readableBytesView, as: UTF8.self)
    }

    @Test("fields are tab-separated, NULL is \\N, text escapes backslash, tab, newline and CR and drops NUL")
    func text() {
        #expect(
            Self.row {
                $0.integer(1)
                $0.text(nil)
                $0.text("plain")
            } == "1\t\\N\tplain\n")
        #expect(Self.row { $0.text("a\\b\tc\nd\re\u{0}f ✓") } == "a\\\\b\\tc\\nd\\re" + "f ✓\n")
        #expect(
            Self.row {
                $0.integer(Int64.min)
                $0.integer(Int64.max)
                $0.integer(-7)
                $0.integer(0)
            }
                == "-9223372036854775808\t9223372036854775807\t-7\t0\n")
    }

    @Test("bytea: mostly printable bytes in escape form, the rest in hex")
    func bytea() {
        #expect(Self.row { $0.bytea(Array("{\"a\":\"\\\\\"}".utf8)) } == #"{"a":"\\\\\\\\"}"# + "\n")
        #expect(
            Self.row { $0.bytea(Array("abcdefgh\u{0}ijklmno".utf8)) } == "abcdefgh\\\\000ijklmno\n",
            "one unprintable byte in 16: escaped")
        #expect(Self.row { $0.bytea(Array("ab\u{0}c".utf8)) } == "\\\\x61620063\n", "one in four: hex")
        #expect(Self.row { $0.bytea([0xff, 0x00, 0x80, 0x41]) } == "\\\\xff008041\n")
        #expect(Self.row { $0.bytea([]) } == "\n")
        #expect(Self.row { $0.bytea(nil) } == "\\N\n")
    }

    @Test("timestamps in UTC with microseconds, before 1970 and on leap days too")
    func timestamps() {
        #expect(Self.row { $0.timestamp(Date(timeIntervalSince1970: 0)) } == "1970-01-01 00:00:00.000000+00\n")
        #expect(Self.row { $0.timestamp(Date(timeIntervalSince1970: -0.5)) } == "1969-12-31 23:59:59.500000+00\n")
        #expect(
            Self.row { $0.timestamp(Date(timeIntervalSince1970: 1_709_210_096.123456)) }
                == "2024-02-29 12:34:56.123456+00\n")
        #expect(
            Self.row { $0.timestamp(Date(timeIntervalSince1970: -2_208_988_800)) } == "1900-01-01 00:00:00.000000+00\n")
    }

    @Test(
        "PostgreSQL reads every value back as it was, whatever the session's time zone",
        arguments: ["UTC", "Asia/Kolkata", "America/St_Johns"])
    func roundTrip(timeZone: String) async throws {
        let texts = [
            "", "plain", "tab\there", "new\nline\r\n", "back\\slash", "ünïcödé ✓ 🎬", "\\N", "\\.", "trailing\\",
        ]
        let bodies: [[UInt8]] = [
            [], Array("{\"json\": true}".utf8), [0, 1, 2, 255, 254], Array(repeating: 0x5c, count: 9),
            (0...255).map(UInt8.init),
            Array("mostly text\u{0}with a NUL".utf8), [0xc3, 0x28, 0xa0, 0xa1],
        ]
        let dates = [0, -0.5, 1_709_210_096.123456, 4_102_444_800.999999, -2_208_988_800].map(
            Date.init(timeIntervalSince1970:))
        var buffer = ByteBuffer()
        let count = max(texts.count, bodies.count, dates.count)
        for index in 0..<count {
            CopyTextEncoder.append(to: &buffer) { row in
                row.integer(Int64(index))
                row.text(texts[index % texts.count])
                row.bytea(bodies[index % bodies.count])
                row.timestamp(dates[index % dates.count])
            }
        }
        let rows = buffer
        try await withTestDatabase { database in
            try await database.client.withConnection { connection in
                try await connection.query("SET TIME ZONE \(unescaped: "'\(timeZone)'")", logger: database.logger)
                try await connection.query(
                    "CREATE TABLE copied (i bigint, t text, b bytea, ts timestamptz)", logger: database.logger)
                try await connection.copyFrom(table: "copied", columns: ["i", "t", "b", "ts"], logger: database.logger)
                { writer in
                    try await writer.write(rows)
                }
                let copied = try await connection.query(
                    "SELECT i, t, b, ts FROM copied ORDER BY i", logger: database.logger)
                var seen = 0
                for try await (index, text, body, date) in copied.decode((Int64, String, ByteBuffer, Date).self) {
                    let i = Int(index)
                    #expect(text == texts[i % texts.count])
                    #expect(Array(buffer: body) == bodies[i % bodies.count])
                    #expect(
                        abs(date.timeIntervalSince(dates[i % dates.count])) < 0.000_001,
                        "\(date) vs \(dates[i % dates.count])")
                    seen += 1
                }
                #expect(seen == count)

                // The same text read back by CopyTextColumns, in chunks that cut rows and escapes, and inserted: what
                // COPY stored, exactly.
                try await connection.query(
                    "CREATE TABLE inserted (i bigint, t text, b bytea, ts timestamptz)", logger: database.logger)
                var columns = CopyTextColumns(count: 4)
                var rest = rows
                while let chunk = rest.readSlice(length: min(7, rest.readableBytes)), chunk.readableBytes > 0 {
                    try columns.read(chunk)
                }
                #expect(columns.rows == count && !columns.holdsPartialRow)
                var binds = PostgresBindings()
                for column in columns.take() { binds.append(column) }
                try await connection.query(
                    PostgresQuery(
                        unsafeSQL: """
                            INSERT INTO inserted SELECT i::bigint, t, b::bytea, ts::timestamptz
                            FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS u(i, t, b, ts)
                            """, binds: binds), logger: database.logger)
                let differing = try await connection.query(
                    """
                    SELECT count(*)::int FROM ((TABLE copied EXCEPT TABLE inserted) UNION ALL
                    (TABLE inserted EXCEPT TABLE copied)) AS differences
                    """, logger: database.logger)
                for try await differences in differing.decode(Int.self) { #expect(differences == 0) }
            }
        }
    }

    @Test("rows read back from COPY text: a row with too few or too many fields is an error, never a row")
    func malformedRows() {
        var columns = CopyTextColumns(count: 3)
        #expect(throws: StoreError.self) { try columns.read(ByteBuffer(string: "1\t2\n")) }
        columns = CopyTextColumns(count: 3)
        #expect(throws: StoreError.self) { try columns.read(ByteBuffer(string: "1\t2\t3\t4\n")) }
        columns = CopyTextColumns(count: 3)
        #expect(throws: Never.self) { try columns.read(ByteBuffer(string: "1\t\\N\t3\n4\t")) }
        #expect(columns.rows == 1 && columns.holdsPartialRow)
    }
}

@Suite("Header lists as stored")
struct HeaderListEncoderTests {
    @Test(
        "a compact JSON array of name and value objects that jsonb reads back; quotes, backslashes and control characters escaped"
    )
    func json() async throws {
        let headers = [
            Exchange.Header(name: "content-type", value: "application/json"),
            Exchange.Header(name: "x-quote", value: #"say "hi" \ bye"#),
            Exchange.Header(name: "x-control", value: "tab\tnew\nline\u{1}"),
            Exchange.Header(name: "x-unicode", value: "ünïcödé ✓"),
        ]
        let encoded = HeaderListEncoder.encode(headers)
        #expect(
            String(decoding: encoded, as: UTF8.self).hasPrefix(#"[{"name":"content-type","value":"application/json"},"#)
        )
        #expect(try JSONDecoder().decode([Exchange.Header].self, from: Data(encoded)) == headers)
        #expect(HeaderListEncoder.encode([]).isEmpty)
        try await withTestDatabase { database in
            let rows = try await database.client.query(
                "SELECT (convert_from(\(ByteBuffer(bytes: encoded)), 'UTF8')::jsonb -> 1 ->> 'value')",
                logger: database.logger
            )
            for try await value in rows.decode(String.self) { #expect(value == #"say "hi" \ bye"#) }
        }
    }
}

@Suite("Payload catalog")
struct PayloadCatalogTests {
    @Test("a payload is named by the first 16 bytes of its SHA-256, the one PostgreSQL computes, and is new only once")
    func digests() async throws {
        var catalog = PayloadCatalog()
        let body = Array(String(repeating: "a large replayed body ", count: 100).utf8)
        let small = Array("small".utf8)
        let first = catalog.digest(of: body)
        #expect(first.isNew && first.digest == Array(SHA256.hash(data: body).prefix(16)))
        #expect(catalog.digest(of: body) == (first.digest, false), "the same array again")
        let copy = Array(body.map { $0 })
        #expect(catalog.digest(of: copy) == (first.digest, false), "the same bytes in another array")
        var changed = body
        changed[0] = UInt8(ascii: "A")
        let other = catalog.digest(of: changed)
        #expect(other.isNew && other.digest != first.digest, "an array changed in place is another payload")
        let smallFirst = catalog.digest(of: small)
        #expect(smallFirst.isNew && catalog.digest(of: small) == (smallFirst.digest, false))
        try await withTestDatabase { database in
            let rows = try await database.client.query(
                "SELECT substring(sha256(\(ByteBuffer(bytes: body))) for 16)", logger: database.logger)
            for try await digest in rows.decode(ByteBuffer.self) { #expect(Array(buffer: digest) == first.digest) }
        }
    }

    @Test("past its limit the catalog forgets, and a payload is written once more (never lost)")
    func limit() {
        var catalog = PayloadCatalog(limit: 3)
        let payloads = (0..<4).map { Array(String(repeating: "payload \($0) ", count: 100).utf8) }
        #expect(payloads.map { catalog.digest(of: $0).isNew } == [true, true, true, true])
        #expect(catalog.digest(of: payloads[3]).isNew == false)
        #expect(
            catalog.digest(of: Array(payloads[3].map { $0 })).isNew == false, "the last one's bytes in another array")
        #expect(catalog.digest(of: Array(payloads[0].map { $0 })).isNew, "the first was forgotten when the fourth came")
    }
}
