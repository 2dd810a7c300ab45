/// Step definitions over a `World` (your app driver, made fresh for every scenario), matched by Cucumber
/// expression or regular expression. As in Cucumber, the keyword does not take part in matching:
/// `given`, `when` and `then` only make the definitions read like the steps.
///
/// ```swift
/// var steps = Steps<ClinicApp>()
/// steps.given("I open the app") { app, _ in try await app.open() }
/// steps.when("I book the {int}st slot of tomorrow") { app, match in try await app.book(slot: match.int(0)) }
/// steps.then(regex: #"the bot offers "(OK|SURE)""#) { app, match in try expect(app.options == [match[0]]) }
/// ```
public struct Steps<World>: Sendable {
    public typealias Body = @Sendable (World, StepMatch) async throws -> Void

    struct Definition: Sendable {
        var expression: StepExpression
        var body: Body
        /// Where it was defined, for ambiguity messages.
        var file: String
        var line: Int
    }

    private(set) var definitions: [Definition] = []
    private var parameterTypes = ParameterType.builtIn
    /// Expressions that did not compile: a run reports them before any scenario starts.
    private(set) var problems: [String] = []

    public init() {}

    /// Adds a parameter type for Cucumber expressions defined after it (`{color}`).
    public mutating func parameterType(_ type: ParameterType) {
        parameterTypes[type.name] = type
    }

    public mutating func given(_ expression: String, file: String = #fileID, line: Int = #line, _ body: @escaping Body)
    {
        define(expression: expression, file: file, line: line, body)
    }

    public mutating func when(_ expression: String, file: String = #fileID, line: Int = #line, _ body: @escaping Body) {
        define(expression: expression, file: file, line: line, body)
    }

    public mutating func then(_ expression: String, file: String = #fileID, line: Int = #line, _ body: @escaping Body) {
        define(expression: expression, file: file, line: line, body)
    }

    public mutating func given(regex: String, file: String = #fileID, line: Int = #line, _ body: @escaping Body) {
        define(regex: regex, file: file, line: line, body)
    }

    public mutating func when(regex: String, file: String = #fileID, line: Int = #line, _ body: @escaping Body) {
        define(regex: regex, file: file, line: line, body)
    }

    public mutating func then(regex: String, file: String = #fileID, line: Int = #line, _ body: @escaping Body) {
        define(regex: regex, file: file, line: line, body)
    }

    private mutating func define(expression: String, file: String, line: Int, _ body: @escaping Body) {
        add(file: file, line: line, body) { [parameterTypes] () throws(OrchestrateKitError) in
            try StepExpression(expression: expression, types: parameterTypes)
        }
    }

    private mutating func define(regex: String, file: String, line: Int, _ body: @escaping Body) {
        add(file: file, line: line, body) { () throws(OrchestrateKitError) in try StepExpression(regex: regex) }
    }

    private mutating func add(
        file: String, line: Int, _ body: @escaping Body, _ compile: () throws(OrchestrateKitError) -> StepExpression
    ) {
        do {
            definitions.append(Definition(expression: try compile(), body: body, file: file, line: line))
        } catch {
            problems.append("\(file):\(line): \(error.message)")
        }
    }

    /// The definition matching `text` with its arguments; throws when several match or an argument does
    /// not convert. `nil` when none matches.
    func definition(for text: String) throws(OrchestrateKitError) -> (Definition, [StepValue])? {
        var found: [(Definition, [StepValue])] = []
        for definition in definitions {
            if let values = try definition.expression.match(text) { found.append((definition, values)) }
        }
        guard found.count <= 1 else {
            let places = found.map { "\"\($0.0.expression.source)\" (\($0.0.file):\($0.0.line))" }.joined(
                separator: ", ")
            throw OrchestrateKitError(.ambiguous, "\"\(text)\" matches \(found.count) step definitions: \(places)")
        }
        return found.first
    }
}
