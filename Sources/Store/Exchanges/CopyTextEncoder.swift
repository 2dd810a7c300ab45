import Foundation
import NIOCore

/// One row of PostgreSQL's COPY text format: fields separated by tabs, `\N` for NULL, backslash, tab, newline and
/// carriage return escaped (NUL, which text columns cannot hold, dropped). Encoded straight into the buffer, without
/// Foundation formatting or intermediate strings: this runs for every exchange a mock server answers.
///
/// ```swift
/// CopyTextEncoder.append(to: &buffer) { row in
///     row.integer(attemptID)
///     row.text(exchange.url)
///     row.timestamp(exchange.startedAt)
/// }
/// ```
package struct CopyTextEncoder {
    private var buffer: ByteBuffer
    private var first = true

    private init() {
        buffer = ByteBuffer()
    }

    /// Appends one row, its fields written by `fields`. The row writer holds the buffer meanwhile (and
    /// the caller an empty one): a buffer referenced twice would be copied whole on the row's first write.
    package static func append(to buffer: inout ByteBuffer, _ fields: (inout CopyTextEncoder) -> Void) {
        var row = CopyTextEncoder()
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

    package mutating func integer(_ value: Int64?) {
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

    package mutating func text(_ value: String?) {
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
    package mutating func bytea(_ bytes: [UInt8]?) {
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
    package mutating func timestamp(_ date: Date?) {
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

/// Copies a short literal into `target` at `offset`; returns the offset after it.
private func put(_ literal: StaticString, _ target: UnsafeMutableRawBufferPointer, _ offset: Int) -> Int {
    let count = literal.utf8CodeUnitCount
    UnsafeMutableRawBufferPointer(rebasing: target[offset..<offset + count])
        .copyMemory(from: UnsafeRawBufferPointer(start: literal.utf8Start, count: count))
    return offset + count
}

/// The lowercase hex digit of a nibble (0…15).
func hexDigit(_ nibble: UInt8) -> UInt8 {
    nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") - 10 + nibble
}
