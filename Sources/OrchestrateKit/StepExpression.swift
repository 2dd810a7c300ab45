import Foundation

/// A value a step definition's parameter captured.
public enum StepValue: Sendable, Equatable, CustomStringConvertible {
    case int(Int)
    case double(Double)
    case string(String)

    public var description: String {
        switch self {
        case .int(let value): "\(value)"
        case .double(let value): "\(value)"
        case .string(let value): value
        }
    }
}

/// A named parameter of Cucumber expressions: `{int}`, or one of your own (`{color}`).
public struct ParameterType: Sendable {
    public var name: String
    /// What the parameter matches; groups inside must be non-capturing (`(?:…)`).
    public var regex: String
    /// The value of matched text; `nil` when it does not convert (the step then fails, saying so).
    public var transform: @Sendable (String) -> StepValue?

    public init(name: String, regex: String, transform: @escaping @Sendable (String) -> StepValue? = { .string($0) }) {
        self.name = name
        self.regex = regex
        self.transform = transform
    }

    /// Cucumber's built-in types: int, float, word, string, the anonymous `{}`, and the JVM names
    /// (double, bigdecimal, byte, short, long, biginteger) with the same meaning.
    public static let builtIn: [String: ParameterType] = {
        let integer = #"-?\d+"#
        let decimal = #"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"#
        let toInt: @Sendable (String) -> StepValue? = { Int($0).map(StepValue.int) }
        let toDouble: @Sendable (String) -> StepValue? = { Double($0).map(StepValue.double) }
        var types: [String: ParameterType] = [
            "word": ParameterType(name: "word", regex: #"[^\s]+"#),
            "": ParameterType(name: "", regex: ".*"),
            "string": ParameterType(name: "string", regex: #""(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'"#) { text in
                // Without its quotes; \" and \' stand for the quote itself.
                let quote = text.first!
                return .string(
                    String(text.dropFirst().dropLast()).replacingOccurrences(of: "\\\(quote)", with: "\(quote)"))
            },
        ]
        for name in ["int", "byte", "short", "long", "biginteger"] {
            types[name] = ParameterType(name: name, regex: integer, transform: toInt)
        }
        for name in ["float", "double", "bigdecimal"] {
            types[name] = ParameterType(name: name, regex: decimal, transform: toDouble)
        }
        return types
    }()
}

/// A step definition's pattern, compiled: a Cucumber expression (`I book {int} slot(s) for {string}`) or a
/// regular expression. Either must match a step's whole text.
struct StepExpression: Sendable {
    /// As written, for messages.
    let source: String
    private let regex: CompiledRegex
    /// Per capture group: how its text becomes a value (a regular expression's groups stay strings).
    private let parameters: [ParameterType?]

    /// A regular expression; each capture group is a string argument.
    init(regex pattern: String) throws(OrchestrateKitError) {
        source = pattern
        regex = try CompiledRegex("^(?:\(pattern))$", source: pattern)
        parameters = Array(repeating: nil, count: regex.expression.numberOfCaptureGroups)
    }

    /// A Cucumber expression: `{type}` parameters, `(optional text)`, `alternative/words`, `\` escapes.
    init(expression: String, types: [String: ParameterType]) throws(OrchestrateKitError) {
        source = expression
        let compiled = try CucumberExpressionCompiler(expression, types: types).compile()
        regex = try CompiledRegex("^\(compiled.pattern)$", source: expression)
        guard regex.expression.numberOfCaptureGroups == compiled.parameters.count else {
            throw OrchestrateKitError(
                .expression, "\"\(expression)\": a parameter type's regex has capturing groups; write them as (?:…)")
        }
        parameters = compiled.parameters
    }

    /// The arguments when the expression matches all of `text`; a parameter whose text does not convert is an error.
    func match(_ text: String) throws(OrchestrateKitError) -> [StepValue]? {
        let range = NSRange(text.startIndex..<text.endIndex, in: text)
        guard let result = regex.expression.firstMatch(in: text, range: range) else { return nil }
        var values: [StepValue] = []
        for (index, parameter) in parameters.enumerated() {
            let captured = Range(result.range(at: index + 1), in: text).map { String(text[$0]) } ?? ""
            guard let parameter else {
                values.append(.string(captured))
                continue
            }
            guard let value = parameter.transform(captured) else {
                throw OrchestrateKitError(
                    .argument, "\"\(captured)\" is not a valid {\(parameter.name)} in \"\(text)\"")
            }
            values.append(value)
        }
        return values
    }
}

/// An NSRegularExpression, which is immutable and documented as safe to use from several threads.
private final class CompiledRegex: @unchecked Sendable {
    let expression: NSRegularExpression

    init(_ pattern: String, source: String) throws(OrchestrateKitError) {
        do {
            expression = try NSRegularExpression(pattern: pattern)
        } catch {
            throw OrchestrateKitError(.expression, "\"\(source)\" is not a valid regular expression: \(error)")
        }
    }
}
