/// Text made safe for XML 1.0 attributes and content.
enum XMLText {
    /// Escapes markup characters and replaces characters XML 1.0 cannot carry (most control
    /// characters, e.g. the ESC of colored output) with a visible `\u{…}` form.
    static func escape(_ text: String) -> String {
        // Most text (names, ids, short logs) needs nothing: one pass over the bytes says so. Every character handled
        // below starts with one of these bytes (U+FFFE and U+FFFF with 0xEF).
        if !text.utf8.contains(where: {
            ($0 < 0x20 && $0 != 0x09 && $0 != 0x0A) || $0 == 0x26 || $0 == 0x3C || $0 == 0x3E || $0 == 0x22
                || $0 == 0x27 || $0 == 0xEF
        }) {
            return text
        }
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&apos;"
            case "\t", "\n": result.unicodeScalars.append(scalar)
            case "\r": result += "&#13;"
            default:
                let value = scalar.value
                if value < 0x20 || (0xD800...0xDFFF).contains(value) || value == 0xFFFE || value == 0xFFFF {
                    result += "\\u{\(String(value, radix: 16, uppercase: true))}"
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result
    }
}
