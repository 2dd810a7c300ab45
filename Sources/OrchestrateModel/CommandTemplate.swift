import Foundation

/// A command template's placeholders (`{id}`, `{ids}`, …) filled in one pass over the template.
///
/// Each placeholder the template holds is replaced once, by its values quoted for where it stands in the shell's
/// reading of the template: outside quotes (and inside `$(…)` or backticks, read afresh) each value is one shell word
/// (``ShellWord/quote(_:)``); inside `'…'`, `"…"` or a here-document the values (joined by spaces) are escaped for it;
/// in a comment a placeholder is left as it is. Nothing in a value is ever read again: not as a placeholder, not as
/// shell syntax. A test's id is data, never code.
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
        var words: [Substring: [String]] = [:]
        let compiled = Compiled(template) { name in
            guard let value = values(name) else { return false }
            words[name] = value
            return true
        }
        return compiled.fill { words[$0] ?? [] }
    }

    /// A template read once: its text between placeholders, and each placeholder with where it stands in the shell's
    /// reading. A suite fills it for each of its thousands of tests without reading the template again.
    package struct Compiled: Sendable {
        private enum Part: Sendable {
            case text(String)
            case placeholder(String, Place)
        }
        private var parts: [Part] = []

        /// `template` read once; `isPlaceholder` says which names (without their braces) are placeholders: any other
        /// `{name}` is left as it is (a shell's `${HOME}` or `{a,b}`).
        package init(_ template: String, placeholders isPlaceholder: (Substring) -> Bool) {
            // The shell reads bytes: a quote followed by a combining mark is still a quote. So the template is read by
            // Unicode scalars (each character the shell treats specially is one), never by Characters.
            let scalars = template.unicodeScalars
            var reader = Reader()
            var output = String.UnicodeScalarView()
            var index = scalars.startIndex
            func flush() {
                if !output.isEmpty { parts.append(.text(String(output))) }
                output = String.UnicodeScalarView()
            }
            while index < scalars.endIndex {
                if reader.atLineStart, case .heredoc(let delimiter, _, let stripsTabs) = reader.quoting {
                    // A here-document ends at a line that is its delimiter (after leading tabs, for `<<-`).
                    let end = scalars[index...].firstIndex(of: "\n") ?? scalars.endIndex
                    let line = scalars[index..<end]
                    if (stripsTabs ? line.drop { $0 == "\t" } : line).elementsEqual(delimiter.unicodeScalars) {
                        output.append(contentsOf: line)
                        index = end
                        reader.quoting = .none
                        reader.atLineStart = false
                        continue
                    }
                }
                let scalar = scalars[index]
                if scalar == "{", reader.quoting != .comment,
                    let close = scalars[index...].prefix(CommandTemplate.longestName + 2).firstIndex(of: "}")
                {
                    let name = Substring(scalars[scalars.index(after: index)..<close])
                    if isPlaceholder(name) {
                        flush()
                        parts.append(.placeholder(String(name), reader.place))
                        index = scalars.index(after: close)
                        reader.previous = Reader.wordCharacter
                        reader.atLineStart = false
                        continue
                    }
                }
                output.append(scalar)
                index = scalars.index(after: index)
                if reader.escapes(scalar), index < scalars.endIndex {
                    // The next character is taken literally: copied as it is, part of a word.
                    output.append(scalars[index])
                    index = scalars.index(after: index)
                    reader.previous = Reader.wordCharacter
                    reader.atLineStart = false
                    continue
                }
                if scalar == "<", reader.quoting == .none, index < scalars.endIndex, scalars[index] == "<" {
                    index = scalars.index(after: index)
                    output.append("<")
                    let (delimiter, rest) = CommandTemplate.heredocDelimiter(scalars[index...])
                    output.append(contentsOf: scalars[index..<rest])
                    index = rest
                    reader.pendingHeredoc = delimiter
                    reader.previous = nil
                    continue
                }
                reader.read(scalar)
            }
            flush()
        }

        /// A scenario's command template: `{id}`, `{name}`, `{uri}` and `{line}` are its placeholders.
        package init(scenario template: String) {
            self.init(template) { ["id", "name", "uri", "line"].contains($0) }
        }

        /// A scenario's command: its `{id}`, `{name}`, `{uri}` and `{line}` filled in.
        package func fill(id: String, name: String, uri: String, line: Int) -> String {
            fill { placeholder in
                switch placeholder {
                case "id": [id]
                case "name": [name]
                case "uri": [uri]
                default: ["\(line)"]
                }
            }
        }

        /// The template with each placeholder replaced by the words `values` gives its name, quoted for where it
        /// stands.
        package func fill(_ values: (Substring) -> [String]) -> String {
            var output = ""
            for part in parts {
                switch part {
                case .text(let text): output += text
                case .placeholder(let name, let place): output += place.quote(values(name[...]))
                }
            }
            return output
        }
    }

    /// `{id}`, `{name}`, `{uri}` and `{line}` of one scenario filled in.
    package static func fill(_ template: String, id: String, name: String, uri: String, line: Int) -> String {
        Compiled(scenario: template).fill(id: id, name: name, uri: uri, line: line)
    }

    /// Placeholder names are short: a brace further on closes something else.
    private static let longestName = 32

    /// After `<<`: the here-document's delimiter (without its quotes), whether its body is expanded (an unquoted
    /// delimiter) and whether it strips leading tabs (`<<-`); and where the delimiter word ends.
    private static func heredocDelimiter(
        _ text: Substring.UnicodeScalarView
    ) -> (delimiter: (String, Bool, Bool)?, end: String.Index) {
        var index = text.startIndex
        var stripsTabs = false
        if index < text.endIndex, text[index] == "-" {
            stripsTabs = true
            index = text.index(after: index)
        }
        while index < text.endIndex, text[index] == " " || text[index] == "\t" { index = text.index(after: index) }
        var word = String.UnicodeScalarView()
        var quoted = false
        var quote: Unicode.Scalar?
        while index < text.endIndex {
            let scalar = text[index]
            if let open = quote {
                if scalar == open { quote = nil } else { word.append(scalar) }
            } else if scalar == "'" || scalar == "\"" {
                quote = scalar
                quoted = true
            } else if scalar == "\\" {
                quoted = true
            } else if " \t\n;&|<>()".unicodeScalars.contains(scalar) {
                break
            } else {
                word.append(scalar)
            }
            index = text.index(after: index)
        }
        return (word.isEmpty ? nil : (String(word), !quoted, stripsTabs), index)
    }

    /// The shell's reading of a template, scalar by scalar, as far as quoting goes.
    private struct Reader {
        var quoting = Quoting.none
        /// What to go back to at each `)` or backtick that closes a `$(`, `(` or backtick (a command inside is read
        /// afresh).
        var enclosing: [(quoting: Quoting, closer: Unicode.Scalar, cases: Cases)] = []
        /// The `case` statements open at this level: a `)` that ends one's pattern closes no `$(`.
        var cases = Cases()
        /// The word being read outside quotes (for `case`, `in`, `esac`).
        var word = ""

        struct Cases {
            var open = 0
            var awaitingIn = false
            var inPattern = false
        }
        /// The template's scalar before this one: ``wordCharacter`` after a placeholder or an escaped character, `nil`
        /// at the start and after a here-document's delimiter.
        var previous: Unicode.Scalar?
        var atLineStart = true
        /// A here-document announced on this line: its body starts on the next.
        var pendingHeredoc: (String, Bool, Bool)?

        /// A command read afresh begins (`$(`, `(`, a backtick), inside the current quoting.
        private mutating func enter(closer: Unicode.Scalar) {
            enclosing.append((quoting, closer, cases))
            quoting = .none
            cases = Cases()
            word = ""
        }

        /// The command read afresh ends: back to what enclosed it.
        private mutating func leave() {
            let outer = enclosing.removeLast()
            quoting = outer.quoting
            cases = outer.cases
            word = ""
        }

        /// Where a placeholder here stands, for quoting its words.
        var place: Place {
            Place(
                quoting: quoting, insideBackticks: enclosing.contains { $0.closer == "`" },
                withinDoubleQuotedBackticks: enclosing.contains { $0.closer == "`" && $0.quoting == .double })
        }

        /// Whether a backslash here takes the next character literally.
        func escapes(_ scalar: Unicode.Scalar) -> Bool {
            guard scalar == "\\" else { return false }
            switch quoting {
            case .none, .double: return true
            case .heredoc(_, let expands, _): return expands
            case .single, .comment: return false
            }
        }

        /// A scalar that continues a word: the shell reads every byte of a non-ASCII character as one.
        static let wordCharacter: Unicode.Scalar = "_"

        /// Whether `scalar` is part of a word for the shell (as `case`, `in` and `esac` are read): ASCII letters, digits
        /// and `_`, and anything not ASCII (a combining mark after `case` makes another word, not its end).
        private static func isWordCharacter(_ scalar: Unicode.Scalar) -> Bool {
            !scalar.isASCII || scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_"
        }

        mutating func read(_ scalar: Unicode.Scalar) {
            defer {
                previous = scalar
                atLineStart = scalar == "\n"
            }
            let newline = scalar == "\n"
            if quoting == .none {
                if Self.isWordCharacter(scalar) {
                    word.unicodeScalars.append(scalar)
                } else {
                    switch word {
                    case "case": cases.awaitingIn = true
                    case "in" where cases.awaitingIn:
                        cases.awaitingIn = false
                        cases.open += 1
                        cases.inPattern = true
                    case "esac" where cases.open > 0:
                        cases.open -= 1
                        cases.inPattern = false
                    default: break
                    }
                    word = ""
                    if scalar == ";", previous == ";", cases.open > 0 { cases.inPattern = true }
                }
            }
            switch (quoting, scalar) {
            case (.comment, _):
                if newline { quoting = .none }
            case (.none, _) where newline:
                if let (delimiter, expands, stripsTabs) = pendingHeredoc {
                    quoting = .heredoc(delimiter, expands: expands, stripsTabs: stripsTabs)
                    pendingHeredoc = nil
                }
            case (.none, "#") where previous.map { " \t\n;&|()".unicodeScalars.contains($0) } ?? true:
                // Only at a word's start: after a blank (the shell's are ASCII) or an operator.
                quoting = .comment
            case (.none, "'"): quoting = .single
            case (.none, "\""): quoting = .double
            case (.single, "'"), (.double, "\""): quoting = .none
            case (.none, "(") where cases.open > 0 && cases.inPattern:
                // A pattern's optional opening parenthesis: `(x) …`.
                break
            case (.none, "("):
                enter(closer: ")")
            case (.double, "(") where previous == "$", (.heredoc(_, true, _), "(") where previous == "$":
                enter(closer: ")")
            case (.heredoc(_, true, _), "`"):
                enter(closer: "`")
            case (.none, "`") where enclosing.last?.closer == "`":
                leave()
            case (.none, "`"), (.double, "`"):
                enter(closer: "`")
            case (.none, ")") where cases.open > 0 && cases.inPattern:
                // The end of a `case` pattern: its body follows.
                cases.inPattern = false
            case (.none, ")") where enclosing.last?.closer == ")":
                leave()
            default:
                break
            }
        }
    }

    /// Where a placeholder stands in the shell's reading of its template.
    private struct Place: Sendable {
        var quoting: Quoting
        /// Inside backticks the shell reads the text twice: once for backslashes first.
        var insideBackticks: Bool
        var withinDoubleQuotedBackticks: Bool

        /// `words` as they stand here: quoted for the quoting, then, inside backticks, with what the first reading of
        /// the backticks' text would take away (a backslash before `\`, `$`, a backtick, and `"` within double quotes)
        /// escaped.
        func quote(_ words: [String]) -> String {
            let quoted = quoting.quote(words)
            guard insideBackticks else { return quoted }
            return CommandTemplate.prefixing(quoted) {
                "\\$`".utf8.contains($0) || (withinDoubleQuotedBackticks && $0 == UInt8(ascii: "\""))
            }
        }
    }

    /// Where the shell stands in its reading of the template.
    private enum Quoting: Equatable, Sendable {
        case none, single, double, comment
        case heredoc(String, expands: Bool, stripsTabs: Bool)

        func quote(_ words: [String]) -> String {
            switch self {
            case .none:
                return words.isEmpty ? "''" : words.map(ShellWord.quote).joined(separator: " ")
            case .single:
                // Inside '…' nothing is special but the quote that ends it: end it, add an escaped quote, begin again.
                return ShellWord.insideSingleQuotes(words.joined(separator: " "))
            case .double:
                return Self.escaped(words, special: "\\\"$`")
            case .heredoc(_, let expands, _):
                // An expanded body reads `\`, `$` and backticks as a double-quoted string does (a quote is plain
                // there); a quoted delimiter's body reads nothing. A value cannot end the body: it holds no line break.
                return expands ? Self.escaped(words, special: "\\$`") : words.joined(separator: " ")
            case .comment:
                return words.joined(separator: " ")
            }
        }

        private static func escaped(_ words: [String], special: String) -> String {
            CommandTemplate.prefixing(words.joined(separator: " ")) { special.utf8.contains($0) }
        }
    }

    /// `text` with `prefix` (a backslash unless said otherwise) before each byte `isSpecial` names. The shell (and a
    /// POSIX regular expression) reads bytes, and the bytes it treats specially are ASCII: a combining mark after one
    /// does not make it another character, as it does for a Swift `Character`.
    static func prefixing(_ text: String, with prefix: String = "\\", where isSpecial: (UInt8) -> Bool) -> String {
        guard text.utf8.contains(where: isSpecial) else { return text }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count + 8)
        for byte in text.utf8 {
            if isSpecial(byte) { bytes += prefix.utf8 }
            bytes.append(byte)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Shell words.
package enum ShellWord {
    /// A word the shell reads back unchanged.
    package static func quote(_ value: String) -> String {
        if !value.isEmpty, value.utf8.allSatisfy(isSafe) { return value }
        return "'" + insideSingleQuotes(value) + "'"
    }

    /// `text` as the inside of a single-quoted word: each quote ends the word, is escaped and begins it again.
    package static func insideSingleQuotes(_ text: String) -> String {
        // By bytes: a quote followed by a combining mark is one Character, and still a quote to the shell. `'\'` before
        // each quote makes it `'\''`.
        CommandTemplate.prefixing(text, with: #"'\'"#) { $0 == UInt8(ascii: "'") }
    }

    /// Letters, digits and `-_./:=@%+,`: bytes the shell takes literally.
    private static func isSafe(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default: "-_./:=@%+,".utf8.contains(byte)
        }
    }
}
