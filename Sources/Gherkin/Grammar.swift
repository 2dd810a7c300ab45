/// Gherkin's grammar as data, in the form Cucumber publishes it (gherkin.berp), and the walk that turns a
/// position in it into the tokens that may come next.
///
/// The parser keeps its position as a stack of what remains to be matched. At every line it asks the grammar
/// which tokens could come next, in Cucumber's order (end of file first; then each token type where the walk
/// first meets it; a description line last; comments and empty lines, ignored wherever the grammar does not
/// name them, after all) and takes the first that matches. That order is also the `expected:` list of a parse
/// error, so the messages read exactly as Cucumber's.
enum GrammarRule: String, Sendable {
    case gherkinDocument = "GherkinDocument", feature = "Feature", featureHeader = "FeatureHeader", rule = "Rule"
    case ruleHeader = "RuleHeader", background = "Background", scenarioDefinition = "ScenarioDefinition"
    case scenario = "Scenario", examplesDefinition = "ExamplesDefinition", examples = "Examples"
    case examplesTable = "ExamplesTable", step = "Step", stepArgument = "StepArg"
    case dataTableAndMaybeDocString = "DataTableAndMaybeDocString", docStringAndMaybeDataTable =
        "DocStringAndMaybeDataTable"
    case dataTable = "DataTable", docString = "DocString", tags = "Tags", descriptionHelper = "DescriptionHelper"
    case description = "Description"

    indirect enum Expression: Sendable {
        case token(TokenType)
        case rule(GrammarRule)
        case sequence([Expression])
        case choice([Expression])
        case optional(Expression)
        case many(Expression)

        static func some(_ expression: Expression) -> Expression { .sequence([expression, .many(expression)]) }
    }

    var expression: Expression {
        switch self {
        case .gherkinDocument: .optional(.rule(.feature))
        case .feature:
            .sequence([
                .rule(.featureHeader), .optional(.rule(.background)), .many(.rule(.scenarioDefinition)),
                .many(.rule(.rule)),
            ])
        case .featureHeader:
            .sequence([
                .optional(.token(.language)), .optional(.rule(.tags)), .token(.featureLine), .rule(.descriptionHelper),
            ])
        case .rule: .sequence([.rule(.ruleHeader), .optional(.rule(.background)), .many(.rule(.scenarioDefinition))])
        case .ruleHeader: .sequence([.optional(.rule(.tags)), .token(.ruleLine), .rule(.descriptionHelper)])
        case .background: .sequence([.token(.backgroundLine), .rule(.descriptionHelper), .many(.rule(.step))])
        case .scenarioDefinition: .sequence([.optional(.rule(.tags)), .rule(.scenario)])
        case .scenario:
            .sequence([
                .token(.scenarioLine), .rule(.descriptionHelper), .many(.rule(.step)),
                .many(.rule(.examplesDefinition)),
            ])
        case .examplesDefinition: .sequence([.optional(.rule(.tags)), .rule(.examples)])
        case .examples: .sequence([.token(.examplesLine), .rule(.descriptionHelper), .optional(.rule(.examplesTable))])
        case .examplesTable: .some(.token(.tableRow))
        case .step: .sequence([.token(.stepLine), .optional(.rule(.stepArgument))])
        case .stepArgument: .choice([.rule(.dataTableAndMaybeDocString), .rule(.docStringAndMaybeDataTable)])
        case .dataTableAndMaybeDocString: .sequence([.rule(.dataTable), .optional(.rule(.docString))])
        case .docStringAndMaybeDataTable: .sequence([.rule(.docString), .optional(.rule(.dataTable))])
        case .dataTable: .some(.token(.tableRow))
        case .docString: .sequence([.token(.docStringSeparator), .many(.token(.other)), .token(.docStringSeparator)])
        case .tags: .some(.token(.tagLine))
        case .descriptionHelper: .sequence([.many(.token(.empty)), .optional(.rule(.description))])
        case .description: .some(.choice([.token(.other), .token(.comment)]))
        }
    }

    /// Rules that become nodes of the syntax tree (the others only group).
    var isNode: Bool {
        switch self {
        case .stepArgument, .dataTableAndMaybeDocString, .docStringAndMaybeDataTable, .descriptionHelper: false
        default: true
        }
    }

    /// A rule entered through one of `skipping` is only entered when, past such lines, `target` follows
    /// (tags before an Examples block belong to it, not to the next scenario).
    var lookahead: (skipping: Set<TokenType>, target: TokenType)? {
        switch self {
        case .scenarioDefinition: ([.empty, .comment, .tagLine], .scenarioLine)
        case .examplesDefinition: ([.empty, .comment, .tagLine], .examplesLine)
        default: nil
        }
    }
}

/// One way forward from a position: a token type, the rules it ends and starts, and the position after it.
struct Transition {
    enum Action { case start(GrammarRule), end(GrammarRule) }
    enum Frame { case match(GrammarRule.Expression), end(GrammarRule) }

    let type: TokenType
    var actions: [Action]
    let next: [Frame]
    /// The lookahead to pass before taking this transition.
    var lookahead: (skipping: Set<TokenType>, target: TokenType)?

    /// The transitions from a position (a stack of frames, the next to match last), in the order to try them.
    static func from(_ stack: [Frame]) -> [Transition] {
        var found: [Transition] = []
        walk(stack, actions: [], lookahead: nil, into: &found)
        // End of file first, a description line (which matches anything) last, the rest as the walk met them.
        var order: [TokenType] = []
        for transition in found where !order.contains(transition.type) { order.append(transition.type) }
        order =
            order.filter { $0 == .eof } + order.filter { $0 != .eof && $0 != .other } + order.filter { $0 == .other }
        var ordered = order.flatMap { type in found.filter { $0.type == type } }
        if !order.contains(.other) {
            for ignored in [TokenType.comment, .empty] where !order.contains(ignored) {
                ordered.append(Transition(type: ignored, actions: [], next: stack))
            }
        }
        return ordered
    }

    private static func walk(
        _ stack: [Frame], actions: [Action], lookahead: (skipping: Set<TokenType>, target: TokenType)?,
        into found: inout [Transition]
    ) {
        guard let top = stack.last else {
            found.append(Transition(type: .eof, actions: actions, next: []))
            return
        }
        var rest = stack
        rest.removeLast()
        switch top {
        case .end(let rule):
            walk(rest, actions: rule.isNode ? actions + [.end(rule)] : actions, lookahead: nil, into: &found)
        case .match(let expression):
            switch expression {
            case .token(let type):
                let check = lookahead.flatMap { $0.skipping.contains(type) ? $0 : nil }
                found.append(Transition(type: type, actions: actions, next: rest, lookahead: check))
            case .rule(let rule):
                walk(
                    rest + [.end(rule), .match(rule.expression)],
                    actions: rule.isNode ? actions + [.start(rule)] : actions,
                    lookahead: rule.lookahead ?? lookahead, into: &found)
            case .sequence(let parts):
                walk(rest + parts.reversed().map(Frame.match), actions: actions, lookahead: lookahead, into: &found)
            case .choice(let alternatives):
                for alternative in alternatives {
                    walk(rest + [.match(alternative)], actions: actions, lookahead: lookahead, into: &found)
                }
            case .optional(let inner):
                walk(rest + [.match(inner)], actions: actions, lookahead: lookahead, into: &found)
                walk(rest, actions: actions, lookahead: lookahead, into: &found)
            case .many(let inner):
                walk(rest + [top, .match(inner)], actions: actions, lookahead: lookahead, into: &found)
                walk(rest, actions: actions, lookahead: lookahead, into: &found)
            }
        }
    }
}
