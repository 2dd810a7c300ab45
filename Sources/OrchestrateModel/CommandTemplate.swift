import Foundation

/// A command template's placeholders (`{id}`, `{ids}`, …) filled in one pass over the template.
///
/// Each placeholder the template holds is replaced once, by its values quoted for where it stands in the shell's
/// reading of the template: outside quotes each value is one shell word (``ShellWord/quote(_:)``), inside `'…'` or
/// `"…"` the values (joined by spaces) are escaped for those quotes. Nothing in a value is ever read again: not as a
/// placeholder, not as shell syntax. A test's id is data, never code.
///
/// ```swift
/// CommandTemplate.fill("pytest {id}") { $0 == "id" ? ["tests/a.py::t[x; rm -rf /]"] : nil }
/// // pytest 'tests/a.py::t[x; rm -rf /]'
/// ```
package enum CommandTemplate {
    /// `template` with every placeholder that `values` knows replaced. `values` gives the words a placeholder's name
    /// (without its braces) stands for, or `nil` when the name is not a placeholder: then `{name}` is left as it is (a
    /// shell's `${HOME}` or `{a,b}`).
    package static func fill(_ template: String, _ values: (Substring) -> [String]?) -> String {
        // Suites of thousands of scenarios fill it once each: a template without braces is the command.
        guard template.utf8.contains(UInt8(ascii: "{")) else { return template }
        var output = ""
        var quoting = Quoting.none
        // The quoting to go back to at each `)` that closes a `$(` or `(` (a command inside is read afresh).
        var enclosing: [Quoting] = []
        // The template's character before this one, when it was taken as syntax (not a placeholder's, not escaped).
        var previous: Character?
        var index = template.startIndex
        while index < template.endIndex {
            let character = template[index]
            if character == "{", let close = template[index...].prefix(Self.longestName + 2).firstIndex(of: "}") {
                let name = template[template.index(after: index)..<close]
                if let words = values(name) {
                    output += quoting.quote(words)
                    index = template.index(after: close)
                    previous = nil
                    continue
                }
            }
            output.append(character)
            index = template.index(after: index)
            switch (quoting, character) {
            case (.none, "\\"), (.double, "\\"):
                // The next character is taken literally: copied as it is.
                if index < template.endIndex {
                    output.append(template[index])
                    index = template.index(after: index)
                }
                previous = nil
                continue
            case (.none, "'"): quoting = .single
            case (.none, "\""): quoting = .double
            case (.single, "'"), (.double, "\""): quoting = .none
            case (.none, "("):
                enclosing.append(.none)
            case (.double, "(") where previous == "$":
                enclosing.append(.double)
                quoting = .none
            case (.none, ")") where !enclosing.isEmpty: quoting = enclosing.removeLast()
            default: break
            }
            previous = character
        }
        return output
    }

    /// `{id}`, `{name}`, `{uri}` and `{line}` of one scenario filled in.
    package static func fill(_ template: String, id: String, name: String, uri: String, line: Int) -> String {
        fill(template) { placeholder in
            switch placeholder {
            case "id": [id]
            case "name": [name]
            case "uri": [uri]
            case "line": ["\(line)"]
            default: nil
            }
        }
    }

    /// Placeholder names are short: a brace further on closes something else.
    private static let longestName = 32

    /// Where the shell stands in its reading of the template.
    private enum Quoting {
        case none, single, double

        func quote(_ words: [String]) -> String {
            switch self {
            case .none:
                return words.isEmpty ? "''" : words.map(ShellWord.quote).joined(separator: " ")
            case .single:
                // Inside '…' nothing is special but the quote that ends it: end it, add an escaped quote, begin again.
                return words.joined(separator: " ").replacingOccurrences(of: "'", with: #"'\''"#)
            case .double:
                var escaped = ""
                for character in words.joined(separator: " ") {
                    if "\\\"$`".contains(character) { escaped.append("\\") }
                    escaped.append(character)
                }
                return escaped
            }
        }
    }
}

/// Shell words.
package enum ShellWord {
    /// A word the shell reads back unchanged.
    package static func quote(_ value: String) -> String {
        if !value.isEmpty, value.utf8.allSatisfy(isSafe) { return value }
        return "'" + value.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }

    /// Letters, digits and `-_./:=@%+,`: bytes the shell takes literally.
    private static func isSafe(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: "-_./:=@%+,".utf8.contains(byte)
        }
    }
}
