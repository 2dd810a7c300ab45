/// A parse error as Cucumber reports it: `(9:1): expected: #EOF, #TableRow, …, got 'another invalid line here'`.
package struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
    package let message: String
    package let location: Location

    package var description: String { "(\(location.line):\(location.column ?? 0)): \(message)" }
}

/// All the errors of one file (parsing goes on after an error, as Cucumber's parser does, up to 11).
package struct ParseErrors: Error, Sendable, CustomStringConvertible {
    package let errors: [ParseError]
    package var description: String { errors.map(\.description).joined(separator: "\n") }
}

/// Parses feature files into ``GherkinDocument``s.
package enum GherkinParser {
    /// Parses `source` (a whole feature file; LF or CRLF).
    package static func parse(_ source: String) throws(ParseErrors) -> GherkinDocument {
        var parse = Parse(source: source)
        return try parse.run()
    }
}

private struct Parse {
    var lines: [Line]
    var next = 0
    var matcher = TokenMatcher()
    var builder = TreeBuilder()
    var errors: [ParseError] = []
    struct TooManyErrors: Error {}

    init(source: String) {
        // By scalars: a CRLF pair is one Character, which splitting by Character would not cut.
        var pieces = source.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false)
        if pieces.last?.isEmpty == true { pieces.removeLast() }
        lines = pieces.enumerated().map { Line(number: $0.offset + 1, scalars: $0.element) }
    }

    mutating func run() throws(ParseErrors) -> GherkinDocument {
        var stack: [Transition.Frame] = [.match(GrammarRule.gherkinDocument.expression)]
        builder.start(.gherkinDocument)
        do {
            while true {
                let line = next < lines.count ? lines[next] : nil
                let lineNumber = next + 1
                next += 1
                stack = try step(stack, line: line, lineNumber: lineNumber)
                if line == nil { break }
            }
        } catch {
            throw ParseErrors(errors: errors)
        }
        try? builder.end(.gherkinDocument)
        guard errors.isEmpty else { throw ParseErrors(errors: errors) }
        return builder.document()
    }

    /// Takes the first transition the line matches, or records what was expected and stays.
    mutating func step(
        _ stack: [Transition.Frame], line: Line?, lineNumber: Int
    ) throws(TooManyErrors) -> [Transition.Frame] {
        let transitions = Transition.from(stack)
        for transition in transitions {
            guard let token = try match(transition.type, line, lineNumber: lineNumber) else { continue }
            if let lookahead = transition.lookahead, try !self.lookahead(lookahead) { continue }
            for action in transition.actions {
                switch action {
                case .start(let rule): builder.start(rule)
                case .end(let rule):
                    do { try builder.end(rule) } catch { try add(error) }
                }
            }
            builder.add(token)
            return transition.next
        }
        var expected: [String] = []
        for transition in transitions where !expected.contains("#" + transition.type.rawValue) {
            expected.append("#" + transition.type.rawValue)
        }
        let list = expected.joined(separator: ", ")
        if let line {
            try add(
                ParseError(
                    message: "expected: \(list), got '\(String(line.trimmed.strippedOfSpace))'",
                    location: Location(line: lineNumber, column: line.indent + 1)))
        } else {
            try add(
                ParseError(
                    message: "unexpected end of file, expected: \(list)",
                    location: Location(line: lineNumber, column: nil)))
        }
        return stack
    }

    /// Whether, past lines of the skipped kinds, a line of the target kind follows (the lines are not consumed).
    mutating func lookahead(_ lookahead: (skipping: Set<TokenType>, target: TokenType)) throws(TooManyErrors) -> Bool {
        var index = next
        while index < lines.count {
            let line = lines[index]
            index += 1
            if try match(lookahead.target, line, lineNumber: line.number) != nil { return true }
            var skipped = false
            for type in [TokenType.empty, .comment, .tagLine] where lookahead.skipping.contains(type) {
                if try match(type, line, lineNumber: line.number) != nil {
                    skipped = true
                    break
                }
            }
            if !skipped { return false }
        }
        return false
    }

    mutating func match(_ type: TokenType, _ line: Line?, lineNumber: Int) throws(TooManyErrors) -> Token? {
        do {
            return try matcher.match(type, line, lineNumber: lineNumber)
        } catch {
            try add(ParseError(message: error.message, location: error.location))
            return nil
        }
    }

    /// Records an error once; past 10, parsing stops.
    mutating func add(_ error: ParseError) throws(TooManyErrors) {
        guard !errors.contains(error) else { return }
        errors.append(error)
        if errors.count > 10 { throw TooManyErrors() }
    }
}

/// Builds the tree from the parser's rule starts and ends and its tokens, as Cucumber's AstBuilder does.
private struct TreeBuilder {
    final class Node {
        let rule: GrammarRule
        var tokens: [Token] = []
        var children: [(rule: GrammarRule, value: Built)] = []
        init(_ rule: GrammarRule) { self.rule = rule }

        func all(_ rule: GrammarRule) -> [Built] { children.filter { $0.rule == rule }.map(\.value) }
        func single(_ rule: GrammarRule) -> Built? { children.first { $0.rule == rule }?.value }
        func token(_ type: TokenType) -> Token? { tokens.first { $0.type == type } }
        var description: String {
            if case .description(let text) = single(.description) { return text }
            return ""
        }
    }

    enum Built {
        case node(Node), step(Step), docString(DocString), dataTable(DataTable), background(Background)
        case scenario(Scenario), examples(Examples), rows([TableRow]), description(String), rule(Rule), feature(Feature)
    }

    var stack: [Node] = []
    var comments: [Comment] = []
    var feature: Feature?
    var ids = 0

    mutating func start(_ rule: GrammarRule) { stack.append(Node(rule)) }

    mutating func add(_ token: Token) {
        if token.type == .comment {
            comments.append(Comment(location: token.location, text: token.text))
        } else {
            stack.last?.tokens.append(token)
        }
    }

    mutating func end(_ rule: GrammarRule) throws(ParseError) {
        guard let node = stack.popLast() else { return }
        let built = try transform(node)
        if rule == .gherkinDocument {
            if case .feature(let feature) = node.single(.feature) { self.feature = feature }
            return
        }
        stack.last?.children.append((rule, built))
    }

    func document() -> GherkinDocument { GherkinDocument(feature: feature, comments: comments, idsUsed: ids) }

    mutating func id() -> String {
        defer { ids += 1 }
        return String(ids)
    }

    mutating func tags(_ node: Node?) -> [Tag] {
        guard case .node(let tags)? = node?.single(.tags) else { return [] }
        return tags.tokens.flatMap { token in
            token.items.map {
                Tag(id: id(), location: Location(line: token.location.line, column: $0.column), name: $0.text)
            }
        }
    }

    mutating func rows(_ node: Node) throws(ParseError) -> [TableRow] {
        let rows = node.tokens.filter { $0.type == .tableRow }.map { token in
            TableRow(
                id: id(), location: token.location,
                cells: token.items.map {
                    TableCell(location: Location(line: token.location.line, column: $0.column), value: $0.text)
                })
        }
        if let count = rows.first?.cells.count, let odd = rows.first(where: { $0.cells.count != count }) {
            throw ParseError(message: "inconsistent cell count within the table", location: odd.location)
        }
        return rows
    }

    mutating func transform(_ node: Node) throws(ParseError) -> Built {
        switch node.rule {
        case .step:
            let line = node.token(.stepLine)!
            var dataTable: DataTable?
            if case .dataTable(let table)? = node.single(.dataTable) { dataTable = table }
            var docString: DocString?
            if case .docString(let string)? = node.single(.docString) { docString = string }
            return .step(
                Step(
                    id: id(), location: line.location, keyword: line.keyword ?? "", keywordType: line.keywordType,
                    text: line.text, dataTable: dataTable, docString: docString))
        case .docString:
            let separator = node.token(.docStringSeparator)!
            return .docString(
                DocString(
                    location: separator.location,
                    content: node.tokens.filter { $0.type == .other }.map(\.text).joined(separator: "\n"),
                    delimiter: separator.keyword ?? "", mediaType: separator.text.isEmpty ? nil : separator.text))
        case .dataTable:
            let rows = try rows(node)
            return .dataTable(DataTable(location: rows[0].location, rows: rows))
        case .examplesTable:
            return .rows(try rows(node))
        case .description:
            var lines = node.tokens.filter { $0.type == .other }.map(\.text)
            while lines.last?.isEmpty == true { lines.removeLast() }
            return .description(lines.joined(separator: "\n"))
        case .background:
            let line = node.token(.backgroundLine)!
            return .background(
                Background(
                    id: id(), location: line.location, keyword: line.keyword ?? "", name: line.text,
                    description: node.description, steps: steps(node)))
        case .scenarioDefinition:
            let tags = tags(node)
            guard case .node(let scenario)? = node.single(.scenario), let line = scenario.token(.scenarioLine) else {
                return .node(node)
            }
            let examples = scenario.all(.examplesDefinition).compactMap { built -> Examples? in
                if case .examples(let examples) = built { return examples }
                return nil
            }
            return .scenario(
                Scenario(
                    id: id(), location: line.location, tags: tags, keyword: line.keyword ?? "", name: line.text,
                    description: scenario.description, steps: steps(scenario), examples: examples))
        case .examplesDefinition:
            let tags = tags(node)
            guard case .node(let examples)? = node.single(.examples), let line = examples.token(.examplesLine) else {
                return .node(node)
            }
            var rows: [TableRow] = []
            if case .rows(let table)? = examples.single(.examplesTable) { rows = table }
            return .examples(
                Examples(
                    id: id(), location: line.location, tags: tags, keyword: line.keyword ?? "", name: line.text,
                    description: examples.description, tableHeader: rows.first, tableBody: Array(rows.dropFirst())))
        case .rule:
            guard case .node(let header)? = node.single(.ruleHeader), let line = header.token(.ruleLine) else {
                return .node(node)
            }
            let tags = tags(header)
            let (background, scenarios) = backgroundAndScenarios(node)
            let children = (background.map { [Rule.Child.background($0)] } ?? []) + scenarios.map(Rule.Child.scenario)
            return .rule(
                Rule(
                    id: id(), location: line.location, tags: tags, keyword: line.keyword ?? "", name: line.text,
                    description: header.description, children: children))
        case .feature:
            guard case .node(let header)? = node.single(.featureHeader), let line = header.token(.featureLine) else {
                return .node(node)
            }
            let tags = tags(header)
            let (background, scenarios) = backgroundAndScenarios(node)
            var children =
                (background.map { [Feature.Child.background($0)] } ?? []) + scenarios.map(Feature.Child.scenario)
            for case .rule(let rule) in node.all(.rule) { children.append(.rule(rule)) }
            return .feature(
                Feature(
                    location: line.location, tags: tags, language: line.language, keyword: line.keyword ?? "",
                    name: line.text, description: header.description, children: children))
        default:
            return .node(node)
        }
    }

    /// A feature's or rule's background and scenarios.
    func backgroundAndScenarios(_ node: Node) -> (Background?, [Scenario]) {
        var background: Background?
        if case .background(let found)? = node.single(.background) { background = found }
        var scenarios: [Scenario] = []
        for case .scenario(let scenario) in node.all(.scenarioDefinition) { scenarios.append(scenario) }
        return (background, scenarios)
    }

    func steps(_ node: Node) -> [Step] {
        node.all(.step).compactMap { built in
            if case .step(let step) = built { return step }
            return nil
        }
    }
}
