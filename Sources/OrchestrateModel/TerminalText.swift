/// Text from outside (test ids, file names, runners' messages, captured output) made safe to print: control characters
/// cannot clear a screen, retitle a terminal, move the cursor or hide a line behind a carriage return. Line feeds and
/// tabs stay; every other C0 control, DEL, the C1 controls and the bidirectional overrides become visible escapes —
/// `\r`, else `\uXXXX`, which also reads back as the same character inside a JSON string.
package enum TerminalText {
    package static func escaped(_ text: String) -> String { escaped(text, oneLine: false) }

    /// ``escaped(_:)`` on one line: line feeds and tabs escaped too (`\n`, `\t`), for a log line's values.
    package static func line(_ text: String) -> String { escaped(text, oneLine: true) }

    private static func escaped(_ text: String, oneLine: Bool) -> String {
        // Most text needs nothing: one pass over the bytes says so.
        guard text.utf8.contains(where: { mayStartControl($0) && (oneLine || ($0 != 0x0A && $0 != 0x09)) }) else {
            return text
        }
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n" where oneLine: result += "\\n"
            case "\t" where oneLine: result += "\\t"
            case "\r": result += "\\r"
            case _ where needsEscape(scalar):
                result += "\\u" + String(String(scalar.value, radix: 16, uppercase: true).leftPadded(to: 4, with: "0"))
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// The first character of `text` that may not be part of a name (an id, a host): a control character of any kind,
    /// line breaks and tabs included, or a bidirectional override; `nil` when there is none.
    package static func firstControl(in text: String) -> Unicode.Scalar? {
        // Every id of a run passes here at each planning: one pass over the bytes clears most of them.
        guard text.utf8.contains(where: mayStartControl) else { return nil }
        return text.unicodeScalars.first { $0.properties.generalCategory == .control || isBidirectionalControl($0) }
    }

    /// Whether a character this type escapes or refuses may start at `byte` of UTF-8: C0 controls and DEL are one
    /// byte, the C1 controls start with 0xC2, the bidirectional overrides with 0xE2.
    private static func mayStartControl(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == 0x7F || byte == 0xC2 || byte == 0xE2
    }

    /// The text as a terminal would show it, without what only a terminal reads: ANSI escape sequences (CSI `ESC [` …
    /// a final byte, OSC `ESC ]` … BEL or `ESC \`), and the characters ``firstControl(in:)`` refuses; a tab is a space.
    package static func plain<S: StringProtocol>(_ text: S) -> String {
        var output = ""
        var scalars = text.unicodeScalars.makeIterator()
        while let scalar = scalars.next() {
            if scalar == "\u{1B}" {
                guard let kind = scalars.next() else { break }
                if kind == "[" {
                    while let next = scalars.next(), !(0x40...0x7E).contains(next.value) {}
                } else if kind == "]" {
                    while let next = scalars.next(), next.value != 0x07, next.value != 0x1B {}
                }
            } else if scalar == "\t" {
                output.append(" ")
            } else if scalar.properties.generalCategory != .control, !isBidirectionalControl(scalar) {
                output.unicodeScalars.append(scalar)
            }
        }
        return output
    }

    /// `U+001B` for the escape character: how messages name a character they refuse.
    package static func name(_ scalar: Unicode.Scalar) -> String {
        "U+" + String(String(scalar.value, radix: 16, uppercase: true).leftPadded(to: 4, with: "0"))
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0A, 0x09: false
        case 0x00..<0x20, 0x7F, 0x80...0x9F: true
        default: isBidirectionalControl(scalar)
        }
    }

    private static func isBidirectionalControl(_ scalar: Unicode.Scalar) -> Bool {
        (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value) || scalar.value == 0x200E
            || scalar.value == 0x200F
    }
}

extension String {
    fileprivate func leftPadded(to width: Int, with pad: Character) -> String {
        count >= width ? self : String(repeating: pad, count: width - count) + self
    }
}
