import Foundation

/// Cucumber expressions to regular expressions, by Cucumber's grammar:
///
/// ```
/// expression  := (alternation | optional | parameter | text | whitespace)*
/// alternation := alternative ('/' alternative)+   bounded by whitespace, a parameter, or either end
/// alternative := (optional | text)+                not only optionals
/// optional    := '(' (text | whitespace)+ ')'      no parameters inside
/// parameter   := '{' name '}'
/// ```
/// `\` makes the next character plain text; so is a `)` or `}` that closes nothing.
struct CucumberExpressionCompiler {
    private enum Node {
        case text(String)
        case whitespace(String)
        case optional(String, column: Int)
        case parameter(String, column: Int)
        case slash(column: Int)
    }

    private let source: String
    private let types: [String: ParameterType]

    init(_ source: String, types: [String: ParameterType]) {
        self.source = source
        self.types = types
    }

    func compile() throws(OrchestrateKitError) -> (pattern: String, parameters: [ParameterType?]) {
        var pattern = ""
        var parameters: [ParameterType?] = []
        var run: [Node] = []
        // A run is what lies between boundaries (whitespace, parameters): plain text, or an alternation.
        func flush() throws(OrchestrateKitError) {
            defer { run = [] }
            let slashes = run.compactMap { node -> Int? in if case .slash(let column) = node { column } else { nil } }
            guard !slashes.isEmpty else {
                pattern += run.map(Self.regex).joined()
                return
            }
            var alternatives: [[Node]] = [[]]
            for node in run {
                if case .slash = node {
                    alternatives.append([])
                } else {
                    alternatives[alternatives.count - 1].append(node)
                }
            }
            for (index, alternative) in alternatives.enumerated() {
                guard alternative.contains(where: { if case .text = $0 { true } else { false } }) else {
                    let column = index < slashes.count ? slashes[index] : slashes[slashes.count - 1] + 1
                    throw error(
                        at: column,
                        alternative.isEmpty ? "an alternative is empty" : "an alternative may not be only optional text"
                    )
                }
            }
            pattern += "(?:" + alternatives.map { $0.map(Self.regex).joined() }.joined(separator: "|") + ")"
        }
        for node in try nodes() {
            switch node {
            case .whitespace:
                try flush()
                pattern += Self.regex(node)
            case .parameter(let name, let column):
                try flush()
                guard let type = types[name] else {
                    throw error(
                        at: column,
                        "there is no parameter type {\(name)} (known: \(types.keys.sorted().map { "{\($0)}" }.joined(separator: " ")))"
                    )
                }
                pattern += "(\(type.regex))"
                parameters.append(type)
            default:
                run.append(node)
            }
        }
        try flush()
        return (pattern, parameters)
    }

    private static func regex(_ node: Node) -> String {
        switch node {
        case .text(let text), .whitespace(let text): NSRegularExpression.escapedPattern(for: text)
        case .optional(let text, _): "(?:\(NSRegularExpression.escapedPattern(for: text)))?"
        case .parameter, .slash: ""
        }
    }

    /// The expression's nodes, escapes resolved.
    private func nodes() throws(OrchestrateKitError) -> [Node] {
        var nodes: [Node] = []
        var characters = Array(source).enumerated().makeIterator()
        func append(_ character: Character) {
            let isSpace = character.isWhitespace
            switch nodes.last {
            case .text(let text)? where !isSpace: nodes[nodes.count - 1] = .text(text + String(character))
            case .whitespace(let text)? where isSpace: nodes[nodes.count - 1] = .whitespace(text + String(character))
            default: nodes.append(isSpace ? .whitespace(String(character)) : .text(String(character)))
            }
        }
        while let (offset, character) = characters.next() {
            let column = offset + 1
            switch character {
            case "\\":
                guard let (_, escaped) = characters.next() else {
                    throw error(at: column, "the expression ends with a lone \\")
                }
                append(escaped)
            case "/":
                nodes.append(.slash(column: column))
            case "(":
                var text = ""
                var closed = false
                while let (innerOffset, inner) = characters.next() {
                    switch inner {
                    case "\\":
                        guard let (_, escaped) = characters.next() else {
                            throw error(at: innerOffset + 1, "the expression ends with a lone \\")
                        }
                        text.append(escaped)
                    case ")": closed = true
                    case "{": throw error(at: innerOffset + 1, "an optional may not contain a parameter")
                    case "(": throw error(at: innerOffset + 1, "optionals may not be nested")
                    default: text.append(inner)
                    }
                    if closed { break }
                }
                guard closed else { throw error(at: column, "the ( is not closed") }
                guard !text.isEmpty else { throw error(at: column, "an optional is empty") }
                nodes.append(.optional(text, column: column))
            case "{":
                var name = ""
                var closed = false
                while let (innerOffset, inner) = characters.next() {
                    if inner == "}" {
                        closed = true
                        break
                    }
                    guard !["{", "(", ")", "/", "\\"].contains(inner) else {
                        throw error(at: innerOffset + 1, "a parameter name may not contain \(inner)")
                    }
                    name.append(inner)
                }
                guard closed else { throw error(at: column, "the { is not closed") }
                nodes.append(.parameter(name, column: column))
            default:
                // A ) or } without its opening one is plain text, as in Cucumber.
                append(character)
            }
        }
        return nodes
    }

    private func error(at column: Int, _ message: String) -> OrchestrateKitError {
        OrchestrateKitError(.expression, "\"\(source)\" column \(column): \(message)")
    }
}
