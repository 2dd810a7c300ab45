import NIOCore
import PostgresNIO

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Rows in COPY text (as ``CopyRows`` encodes them and the spool keeps them) read back into one PostgreSQL `text[]` per
/// column, for `INSERT … SELECT … FROM unnest($1::text[], …)`: each field reaches its column through the column type's
/// input function, as through `COPY … FROM STDIN`.
///
/// The COPY protocol itself is not used: postgres-nio 1.33 stops the process (a precondition failure) when the
/// connection of a COPY is lost part-way, which a database that crashes or a network that drops does.
package struct CopyTextColumns {
    private(set) var columns: [TextArray]
    /// Complete rows read and not yet taken.
    package private(set) var rows = 0
    /// The start of a row whose end is in a later chunk.
    private var partial = ByteBuffer()

    package init(count: Int) {
        columns = Array(repeating: TextArray(), count: count)
    }

    /// Whether bytes of a row whose end has not come are held.
    package var holdsPartialRow: Bool { partial.readableBytes > 0 }

    /// Reads the complete rows of `chunk` (after what an earlier chunk left unfinished); an unfinished last row waits
    /// for the next chunk. Throws on a row with the wrong number of fields.
    package mutating func read(_ chunk: ByteBuffer) throws {
        // Whole rows (nearly every chunk) are read where they are; only a row cut in two is copied together.
        var text = chunk
        if partial.readableBytes > 0 {
            partial.writeImmutableBuffer(chunk)
            text = partial
        }
        let count = columns.count
        let consumed = try text.withUnsafeReadableBytes { bytes -> Int in
            var rowStart = 0
            while let newline = bytes.index(of: UInt8(ascii: "\n"), from: rowStart, to: bytes.count) {
                var fieldStart = rowStart
                var field = 0
                while true {
                    let end = bytes.index(of: UInt8(ascii: "\t"), from: fieldStart, to: newline) ?? newline
                    guard field < count else { throw Self.malformed(count) }
                    columns[field].append(copyField: UnsafeRawBufferPointer(rebasing: bytes[fieldStart..<end]))
                    field += 1
                    if end == newline { break }
                    fieldStart = end + 1
                }
                guard field == count else { throw Self.malformed(count) }
                rows += 1
                rowStart = newline + 1
            }
            return rowStart
        }
        text.moveReaderIndex(forwardBy: consumed)
        partial = text.readableBytes > 0 ? ByteBuffer(buffer: text) : ByteBuffer()
    }

    /// The columns of the rows read so far; reading starts afresh (an unfinished row stays).
    package mutating func take() -> [TextArray] {
        defer {
            columns = Array(repeating: TextArray(), count: columns.count)
            rows = 0
        }
        return columns
    }

    private static func malformed(_ count: Int) -> StoreError {
        StoreError(.unreadableRows, "a network log row in COPY text does not have its \(count) fields")
    }
}

/// A one-dimensional PostgreSQL `text[]` in the binary format, NULLs included, built element by element.
package struct TextArray: PostgresNonThrowingEncodable, Sendable {
    package static var psqlType: PostgresDataType { .textArray }
    package static var psqlFormat: PostgresFormat { .binary }

    /// Each element: its length (-1 for NULL), then its bytes.
    private var elements = ByteBuffer()
    private(set) var count: Int32 = 0
    private var hasNull = false

    /// Appends a field of COPY text: `\N` is NULL; backslash escapes (`\t`, `\n`, `\\`, octal and hex bytes, …) stand
    /// for what they escape.
    mutating func append(copyField field: UnsafeRawBufferPointer) {
        count += 1
        if field.count == 2, field[0] == UInt8(ascii: "\\"), field[1] == UInt8(ascii: "N") {
            hasNull = true
            elements.writeInteger(Int32(-1))
            return
        }
        let lengthAt = elements.writerIndex
        elements.writeInteger(Int32(0))
        // Runs without a backslash go over whole (most fields have none; a body in hex has one at its start).
        var index = 0
        while index < field.count {
            let backslash = field.index(of: UInt8(ascii: "\\"), from: index, to: field.count) ?? field.count
            elements.writeBytes(UnsafeRawBufferPointer(rebasing: field[index..<backslash]))
            guard backslash + 1 < field.count else {
                // A backslash at the very end stands for itself.
                if backslash < field.count { elements.writeInteger(UInt8(ascii: "\\")) }
                break
            }
            let byte: UInt8
            (byte, index) = Self.unescape(field, at: backslash + 1)
            elements.writeInteger(byte)
        }
        elements.setInteger(Int32(elements.writerIndex - lengthAt - 4), at: lengthAt)
    }

    /// The byte a backslash escape stands for, its first character at `index`, and the index after the escape.
    private static func unescape(_ field: UnsafeRawBufferPointer, at index: Int) -> (UInt8, Int) {
        let escaped = field[index]
        switch escaped {
        case UInt8(ascii: "b"): return (0x08, index + 1)
        case UInt8(ascii: "f"): return (0x0C, index + 1)
        case UInt8(ascii: "n"): return (0x0A, index + 1)
        case UInt8(ascii: "r"): return (0x0D, index + 1)
        case UInt8(ascii: "t"): return (0x09, index + 1)
        case UInt8(ascii: "v"): return (0x0B, index + 1)
        case UInt8(ascii: "0")...UInt8(ascii: "7"):
            var value = 0
            var end = index
            while end < field.count, end < index + 3, (UInt8(ascii: "0")...UInt8(ascii: "7")).contains(field[end]) {
                value = value * 8 + Int(field[end] - UInt8(ascii: "0"))
                end += 1
            }
            return (UInt8(truncatingIfNeeded: value), end)
        case UInt8(ascii: "x"):
            var value = 0
            var end = index + 1
            while end < field.count, end < index + 3, let digit = hexValue(field[end]) {
                value = value * 16 + digit
                end += 1
            }
            // `\x` without a hex digit is an `x`, as in PostgreSQL.
            return end == index + 1 ? (escaped, index + 1) : (UInt8(value), end)
        default:
            return (escaped, index + 1)
        }
    }

    private static func hexValue(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): Int(byte - UInt8(ascii: "a")) + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): Int(byte - UInt8(ascii: "A")) + 10
        default: nil
        }
    }

    package func encode<JSONEncoder: PostgresJSONEncoder>(
        into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>
    ) {
        // One dimension, whether it holds NULLs, the element type (text), the dimension's length and lower bound.
        buffer.writeInteger(Int32(1))
        buffer.writeInteger(Int32(hasNull ? 1 : 0))
        buffer.writeInteger(UInt32(25))
        buffer.writeInteger(count)
        buffer.writeInteger(Int32(1))
        buffer.writeImmutableBuffer(elements)
    }
}

extension UnsafeRawBufferPointer {
    /// The index of the first `byte` in `from..<to` (memchr: this runs over every byte of the network log).
    fileprivate func index(of byte: UInt8, from start: Int, to end: Int) -> Int? {
        guard start < end, let base = baseAddress else { return nil }
        guard let found = memchr(base + start, Int32(byte), end - start) else { return nil }
        return UnsafeRawPointer(found) - base
    }
}
