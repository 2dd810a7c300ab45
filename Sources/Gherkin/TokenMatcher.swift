/// What a line can be, in the grammar's terms.
enum TokenType: String, CaseIterable, Sendable {
    case eof = "EOF", empty = "Empty", comment = "Comment", tagLine = "TagLine", featureLine = "FeatureLine"
    case ruleLine = "RuleLine", backgroundLine = "BackgroundLine", scenarioLine = "ScenarioLine"
    case examplesLine = "ExamplesLine", stepLine = "StepLine", docStringSeparator = "DocStringSeparator"
    case tableRow = "TableRow", language = "Language", other = "Other"
}

/// A line recognised as a token: what Cucumber's token matcher sets on its tokens.
struct Token {
    var type: TokenType
    var location: Location
    var text = ""
    var keyword: String?
    var keywordType: KeywordType?
    /// Tags or cells with their columns.
    var items: [(column: Int, text: String)] = []
    var language = "en"
}

/// Recognises lines as tokens. Stateful as Cucumber's: `# language:` changes the keywords, and inside a doc
/// string only its closing separator is one (its indentation is removed from the lines within).
struct TokenMatcher {
    private(set) var language = "en"
    private(set) var dialect = Dialect.all["en"]!
    private var stepKeywords = Dialect.all["en"]!.stepKeywords
    private var docStringSeparator: String?
    private var indentToRemove = 0

    /// Errors a match found (an unknown language, whitespace in a tag); the parser records them.
    struct Failure: Error {
        let message: String
        let location: Location
    }

    /// The token `line` (nil at the end of the file) is, if it is of `type`.
    mutating func match(_ type: TokenType, _ line: Line?, lineNumber: Int) throws(Failure) -> Token? {
        guard let line else {
            return type == .eof
                ? Token(type: .eof, location: Location(line: lineNumber, column: nil), language: language) : nil
        }
        func token(
            _ text: String = "", keyword: String? = nil, keywordType: KeywordType? = nil, indent: Int? = nil,
            items: [(column: Int, text: String)] = []
        ) -> Token {
            var text = text
            while text.unicodeScalars.last == "\r" || text.unicodeScalars.last == "\n" {
                text.unicodeScalars.removeLast()
            }
            return Token(
                type: type, location: Location(line: line.number, column: (indent ?? line.indent) + 1), text: text,
                keyword: keyword, keywordType: keywordType, items: items, language: language)
        }
        switch type {
        case .eof:
            return nil
        case .empty:
            return line.isEmpty ? token(indent: 0) : nil
        case .comment:
            return line.starts(with: "#") ? token(String(line.text), indent: 0) : nil
        case .tagLine:
            guard line.starts(with: "@") else { return nil }
            do {
                return token(items: try line.tags())
            } catch {
                throw Failure(
                    message: "A tag may not contain whitespace",
                    location: Location(line: line.number, column: error.column))
            }
        case .featureLine, .ruleLine, .backgroundLine, .scenarioLine, .examplesLine:
            guard let keyword = titleKeywords(type).first(where: { line.starts(with: $0 + ":") }) else { return nil }
            return token(line.rest(after: keyword.unicodeScalars.count + 1), keyword: keyword)
        case .stepLine:
            guard let step = stepKeywords.first(where: { line.starts(with: $0.keyword) }) else { return nil }
            return token(
                line.rest(after: step.keyword.unicodeScalars.count), keyword: step.keyword, keywordType: step.type)
        case .docStringSeparator:
            if let open = docStringSeparator {
                guard line.starts(with: open) else { return nil }
                docStringSeparator = nil
                indentToRemove = 0
                return token(keyword: open)
            }
            guard let separator = [#"""""#, "```"].first(where: line.starts(with:)) else { return nil }
            docStringSeparator = separator
            indentToRemove = line.indent
            return token(line.rest(after: 3), keyword: separator)
        case .tableRow:
            return line.starts(with: "|") ? token(items: line.cells) : nil
        case .language:
            guard let name = Self.languageHeader(line) else { return nil }
            let matched = token(name)
            guard let dialect = Dialect.all[name] else {
                throw Failure(message: "Language not supported: \(name)", location: matched.location)
            }
            self.dialect = dialect
            language = name
            stepKeywords = dialect.stepKeywords
            return matched
        case .other:
            var text = line.text(removingIndent: indentToRemove)
            if docStringSeparator == #"""""# {
                text = text.replacing(#"\"\"\""#, with: #"""""#)
            } else if docStringSeparator == "```" {
                text = text.replacing(#"\`\`\`"#, with: "```")
            }
            return token(text, indent: 0)
        }
    }

    /// The keywords of a title line (`Feature:`, `Scenario Outline:`…), in the order they are tried.
    private func titleKeywords(_ type: TokenType) -> [String] {
        switch type {
        case .featureLine: dialect.feature
        case .ruleLine: dialect.rule
        case .backgroundLine: dialect.background
        case .scenarioLine: dialect.scenario + dialect.scenarioOutline
        case .examplesLine: dialect.examples
        default: []
        }
    }

    /// `# language: fr` (any spacing) names a language: letters, `-` and `_`.
    private static func languageHeader(_ line: Line) -> String? {
        var rest = line.trimmed[...]
        func skipSpace() { while let first = rest.first, first.isGherkinSpace { rest.removeFirst() } }
        func expect(_ word: String) -> Bool {
            guard rest.starts(with: word.unicodeScalars) else { return false }
            rest.removeFirst(word.unicodeScalars.count)
            return true
        }
        guard expect("#") else { return nil }
        skipSpace()
        guard expect("language") else { return nil }
        skipSpace()
        guard expect(":") else { return nil }
        skipSpace()
        let name = rest.prefix { ("a"..."z").contains($0) || ("A"..."Z").contains($0) || $0 == "-" || $0 == "_" }
        guard !name.isEmpty, rest.dropFirst(name.count).allSatisfy(\.isGherkinSpace) else { return nil }
        return String(name)
    }
}
