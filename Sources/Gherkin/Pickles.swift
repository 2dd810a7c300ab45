/// A scenario ready to run, as Cucumber compiles it: backgrounds prepended (the feature's, then the rule's),
/// an outline expanded once per example row (`<name>` placeholders filled in name, steps and arguments),
/// tags inherited from feature, rule, scenario and examples. Encodes as Cucumber Messages' `pickle`.
package struct Pickle: Sendable, Encodable {
    package var id: String
    package var uri: String
    /// The scenario's line, or for an outline the example row's.
    package var location: Location
    package var astNodeIds: [String]
    package var tags: [PickleTag]
    package var name: String
    package var language: String
    package var steps: [PickleStep]
    /// The scenario's name as written (an outline's with its `<placeholders>`), and for an example row its
    /// cells as `header=value`: what stays the same when scenarios or rows move. Not part of the message.
    package var writtenName: String
    package var example: [String]
    /// The line of the Scenario (or Outline) keyword.
    package var scenarioLine: Int

    private enum CodingKeys: String, CodingKey { case id, uri, location, astNodeIds, tags, name, language, steps }
}

package struct PickleTag: Sendable, Encodable {
    package var name: String
    package var astNodeId: String
}

package struct PickleStep: Sendable, Encodable {
    /// The kind of step; a conjunction (`And`, `But`) takes the kind of the step before it.
    package enum StepType: String, Sendable, Encodable {
        case unknown = "Unknown", context = "Context", action = "Action", outcome = "Outcome"
    }

    package var id: String
    package var astNodeIds: [String]
    package var type: StepType?
    package var text: String
    package var argument: PickleStepArgument?
}

package struct PickleStepArgument: Sendable, Encodable {
    package struct DocString: Sendable, Encodable {
        package var content: String
        package var mediaType: String?
        /// 1 or 2 when the step has both arguments: their order in the file.
        package var argumentIndex: Int?
    }

    package struct DataTable: Sendable, Encodable {
        package struct Row: Sendable, Encodable {
            package struct Cell: Sendable, Encodable { package var value: String }
            package var cells: [Cell]
        }

        package var rows: [Row]
        package var argumentIndex: Int?
    }

    package var docString: DocString?
    package var dataTable: DataTable?
}

extension GherkinDocument {
    /// The document's pickles, in file order. `uri` names the file in them.
    package func pickles(uri: String) -> [Pickle] {
        var compiler = PickleCompiler(uri: uri, nextID: idsUsed)
        guard let feature else { return [] }
        var background: [Step] = []
        for child in feature.children {
            switch child {
            case .background(let steps): background += steps.steps
            case .scenario(let scenario):
                compiler.compile(scenario, tags: feature.tags, background: background, language: feature.language)
            case .rule(let rule):
                var ruleBackground = background
                for child in rule.children {
                    switch child {
                    case .background(let steps): ruleBackground += steps.steps
                    case .scenario(let scenario):
                        compiler.compile(
                            scenario, tags: feature.tags + rule.tags, background: ruleBackground,
                            language: feature.language)
                    }
                }
            }
        }
        return compiler.pickles
    }
}

private struct PickleCompiler {
    let uri: String
    var nextID: Int
    var pickles: [Pickle] = []

    mutating func id() -> String {
        defer { nextID += 1 }
        return String(nextID)
    }

    mutating func compile(_ scenario: Scenario, tags: [Tag], background: [Step], language: String) {
        guard !scenario.examples.isEmpty else {
            var last = PickleStep.StepType.unknown
            var steps: [PickleStep] = []
            if !scenario.steps.isEmpty {
                for step in background + scenario.steps {
                    last = Self.type(of: step) ?? last
                    steps.append(pickleStep(step, type: last, astNodeIds: [step.id], variables: [], values: []))
                }
            }
            pickles.append(
                Pickle(
                    id: id(), uri: uri, location: scenario.location, astNodeIds: [scenario.id],
                    tags: Self.pickleTags(tags + scenario.tags), name: scenario.name, language: language, steps: steps,
                    writtenName: scenario.name, example: [], scenarioLine: scenario.location.line))
            return
        }
        for examples in scenario.examples {
            guard let header = examples.tableHeader else { continue }
            let variables = header.cells.map(\.value)
            for row in examples.tableBody {
                let values = row.cells.map(\.value)
                var last: PickleStep.StepType?
                var steps: [PickleStep] = []
                if !scenario.steps.isEmpty {
                    for step in background {
                        last = Self.type(of: step) ?? last
                        steps.append(pickleStep(step, type: last, astNodeIds: [step.id], variables: [], values: []))
                    }
                    for step in scenario.steps {
                        last = Self.type(of: step) ?? last
                        steps.append(
                            pickleStep(
                                step, type: last, astNodeIds: [step.id, row.id], variables: variables, values: values))
                    }
                }
                pickles.append(
                    Pickle(
                        id: id(), uri: uri, location: row.location, astNodeIds: [scenario.id, row.id],
                        tags: Self.pickleTags(tags + scenario.tags + examples.tags),
                        name: Self.interpolate(scenario.name, variables, values), language: language, steps: steps,
                        writtenName: scenario.name, example: zip(variables, values).map { "\($0)=\($1)" },
                        scenarioLine: scenario.location.line))
            }
        }
    }

    /// The step's own kind, or nil for a conjunction (which keeps the kind before it).
    static func type(of step: Step) -> PickleStep.StepType? {
        switch step.keywordType {
        case .conjunction: nil
        case .context: .context
        case .action: .action
        case .outcome: .outcome
        case .unknown, nil: .unknown
        }
    }

    mutating func pickleStep(
        _ step: Step, type: PickleStep.StepType?, astNodeIds: [String], variables: [String], values: [String]
    ) -> PickleStep {
        var argument: PickleStepArgument?
        if step.dataTable != nil || step.docString != nil {
            var indices: (table: Int, docString: Int)?
            if let table = step.dataTable, let docString = step.docString {
                indices = docString.location.line > table.location.line ? (1, 2) : (2, 1)
            }
            argument = PickleStepArgument(
                docString: step.docString.map { docString in
                    .init(
                        content: Self.interpolate(docString.content, variables, values),
                        mediaType: docString.mediaType.map { Self.interpolate($0, variables, values) },
                        argumentIndex: indices?.docString)
                },
                dataTable: step.dataTable.map { table in
                    .init(
                        rows: table.rows.map { row in
                            .init(cells: row.cells.map { .init(value: Self.interpolate($0.value, variables, values)) })
                        },
                        argumentIndex: indices?.table)
                }
            )
        }
        return PickleStep(
            id: id(), astNodeIds: astNodeIds, type: type, text: Self.interpolate(step.text, variables, values),
            argument: argument)
    }

    /// Fills `<variable>` placeholders, one variable after the other.
    static func interpolate(_ text: String, _ variables: [String], _ values: [String]) -> String {
        var text = text
        for (variable, value) in zip(variables, values) { text = text.replacing("<\(variable)>", with: value) }
        return text
    }

    static func pickleTags(_ tags: [Tag]) -> [PickleTag] { tags.map { PickleTag(name: $0.name, astNodeId: $0.id) } }
}

/// A Cucumber Messages envelope, one per line of `orchestrate gherkin pickles`.
package enum Envelope: Sendable, Encodable {
    case pickle(Pickle)
    case parseError(ParseError, uri: String)

    private enum Keys: String, CodingKey { case pickle, parseError, message, source, uri, location }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        switch self {
        case .pickle(let pickle):
            try container.encode(pickle, forKey: .pickle)
        case .parseError(let error, let uri):
            var parseError = container.nestedContainer(keyedBy: Keys.self, forKey: .parseError)
            try parseError.encode(error.description, forKey: .message)
            var source = parseError.nestedContainer(keyedBy: Keys.self, forKey: .source)
            try source.encode(uri, forKey: .uri)
            try source.encode(error.location, forKey: .location)
        }
    }

    /// The envelopes of one feature file: its pickles, or its parse errors.
    package static func of(source: String, uri: String) -> [Envelope] {
        do {
            return try GherkinParser.parse(source).pickles(uri: uri).map(Envelope.pickle)
        } catch {
            return error.errors.map { .parseError($0, uri: uri) }
        }
    }
}
