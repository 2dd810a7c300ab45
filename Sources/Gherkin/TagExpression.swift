/// A Cucumber tag expression, such as `@smoke and not (@wip or @slow)`.
///
/// Operators by precedence, loosest first: `or`, `and` (both left-associative), `not` (prefix);
/// parentheses group. A backslash escapes `(`, `)`, `\` and whitespace inside a tag (`@with\ space`);
/// before anything else it is an error. The empty expression matches everything. Errors read as
/// Cucumber's do: `Tag expression "@a @b" could not be parsed because of syntax error: Expected operator.`
///
/// ```swift
/// let expression = try TagExpression("@smoke and not @wip")
/// expression.matches(["@smoke"])   // true
/// ```
package struct TagExpression: Sendable, Equatable, CustomStringConvertible {
    indirect enum Node: Sendable, Equatable {
        case tag(String)
        case not(Node)
        case and(Node, Node)
        case or(Node, Node)
        case always
    }

    let root: Node
    /// The expression as written.
    package let source: String

    package struct SyntaxError: Error, Equatable, CustomStringConvertible {
        package let description: String
    }

    package init(_ source: String) throws(SyntaxError) {
        self.source = source
        let tokens = try Self.tokens(of: source)
        root = try Self.parse(tokens, source: source)
    }

    /// Whether a pickle or scenario with these tags (each with its `@`) is selected.
    package func matches(_ tags: some Collection<String>) -> Bool {
        let tags = Set(tags)
        return Self.evaluate(root, tags)
    }

    /// The expression fully parenthesized, as Cucumber prints it: `( @a and not ( @b ) )`.
    package var description: String { Self.render(root) }

    // MARK: Tokens

    private enum Token: Equatable {
        case open, close, and, or, not
        case tag(String)
    }

    private static func tokens(of source: String) throws(SyntaxError) -> [Token] {
        var tokens: [Token] = []
        var current = ""
        var escaped = false
        func flush() {
            guard !current.isEmpty else { return }
            switch current {
            case "and": tokens.append(.and)
            case "or": tokens.append(.or)
            case "not": tokens.append(.not)
            default: tokens.append(.tag(current))
            }
            current = ""
        }
        for character in source {
            if escaped {
                guard character == "(" || character == ")" || character == "\\" || character.isWhitespace else {
                    throw failure(source, "Illegal escape before \"\(character)\".")
                }
                current.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character.isWhitespace {
                flush()
            } else if character == "(" || character == ")" {
                flush()
                tokens.append(character == "(" ? .open : .close)
            } else {
                current.append(character)
            }
        }
        if escaped { throw failure(source, "Illegal escape at the end of the expression.") }
        flush()
        return tokens
    }

    // MARK: Parsing (shunting-yard)

    private enum Expecting: String {
        case operand, `operator`
    }

    private static func parse(_ tokens: [Token], source: String) throws(SyntaxError) -> Node {
        guard !tokens.isEmpty else { return .always }
        var operands: [Node] = []
        var operators: [Token] = []
        var expecting = Expecting.operand

        func expect(_ kind: Expecting) throws(SyntaxError) {
            guard expecting == kind else { throw failure(source, "Expected \(expecting.rawValue).") }
        }
        func reduce(_ token: Token) throws(SyntaxError) {
            switch token {
            case .not:
                guard let operand = operands.popLast() else { throw failure(source, "Expected operand.") }
                operands.append(.not(operand))
            case .and, .or:
                guard let right = operands.popLast(), let left = operands.popLast() else {
                    throw failure(source, "Expected operand.")
                }
                operands.append(token == .and ? .and(left, right) : .or(left, right))
            default:
                break
            }
        }

        for token in tokens {
            switch token {
            case .not:
                try expect(.operand)
                operators.append(token)
            case .and, .or:
                try expect(.operator)
                // Left-associative: operators of the same or higher precedence apply first.
                while let top = operators.last, top != .open, precedence(top) >= precedence(token) {
                    try reduce(operators.removeLast())
                }
                operators.append(token)
                expecting = .operand
            case .open:
                try expect(.operand)
                operators.append(token)
            case .close:
                try expect(.operator)
                while let top = operators.last, top != .open {
                    try reduce(operators.removeLast())
                }
                guard operators.popLast() == .open else { throw failure(source, "Unmatched ).") }
            case .tag(let name):
                try expect(.operand)
                operands.append(.tag(name))
                expecting = .operator
            }
        }
        while let top = operators.popLast() {
            guard top != .open else { throw failure(source, "Unmatched (.") }
            try reduce(top)
        }
        guard expecting == .operator, operands.count == 1 else { throw failure(source, "Expected operand.") }
        return operands[0]
    }

    private static func precedence(_ token: Token) -> Int {
        switch token {
        case .or: 0
        case .and: 1
        case .not: 2
        default: -1
        }
    }

    private static func failure(_ source: String, _ reason: String) -> SyntaxError {
        SyntaxError(description: "Tag expression \"\(source)\" could not be parsed because of syntax error: \(reason)")
    }

    // MARK: Evaluation

    private static func evaluate(_ node: Node, _ tags: Set<String>) -> Bool {
        switch node {
        case .always: true
        case .tag(let name): tags.contains(name)
        case .not(let operand): !evaluate(operand, tags)
        case .and(let left, let right): evaluate(left, tags) && evaluate(right, tags)
        case .or(let left, let right): evaluate(left, tags) || evaluate(right, tags)
        }
    }

    private static func render(_ node: Node) -> String {
        switch node {
        case .always: "true"
        case .tag(let name): escape(name)
        case .not(let operand): "not ( \(render(operand)) )"
        case .and(let left, let right): "( \(render(left)) and \(render(right)) )"
        case .or(let left, let right): "( \(render(left)) or \(render(right)) )"
        }
    }

    private static func escape(_ name: String) -> String {
        var text = ""
        for character in name {
            if character.isWhitespace {
                text.append("\\ ")
                continue
            }
            if character == "(" || character == ")" || character == "\\" { text.append("\\") }
            text.append(character)
        }
        return text
    }
}
