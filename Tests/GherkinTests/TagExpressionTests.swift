import Gherkin
import Testing

@Suite("Tag expressions")
struct TagExpressionTests {
    @Test(
        "precedence: not binds tightest, then and, then or; parentheses group",
        arguments: [
            ("a and b", "( a and b )"),
            ("a or b", "( a or b )"),
            ("not a", "not ( a )"),
            ("( a and b ) or ( c and d )", "( ( a and b ) or ( c and d ) )"),
            (
                "not a or b and not c or not d or e and f",
                "( ( ( not ( a ) or ( b and not ( c ) ) ) or not ( d ) ) or ( e and f ) )"
            ),
            (
                "not a\\(\\) or b and not c or not d or e and f",
                "( ( ( not ( a\\(\\) ) or ( b and not ( c ) ) ) or not ( d ) ) or ( e and f ) )"
            ),
            ("a and b and c", "( ( a and b ) and c )"),
            ("not not a", "not ( not ( a ) )"),
            ("@with\\ space and @x", "( @with\\ space and @x )"),
        ])
    func parsing(expression: String, parenthesized: String) throws {
        #expect(try TagExpression(expression).description == parenthesized)
    }

    @Test("evaluation against a scenario's tags")
    func evaluation() throws {
        let expression = try TagExpression("@smoke and not (@wip or @slow)")
        #expect(expression.matches(["@smoke"]))
        #expect(expression.matches(["@smoke", "@fast"]))
        #expect(!expression.matches(["@smoke", "@wip"]))
        #expect(!expression.matches(["@smoke", "@slow"]))
        #expect(!expression.matches(["@wip"]))
        #expect(!expression.matches([]))
        #expect(try TagExpression("").matches([]))
        #expect(try TagExpression("  ").matches(["@any"]))
        #expect(try TagExpression("x\\(1\\) or (y\\(2\\))").matches(["y(2)"]))
        #expect(try TagExpression("x\\\\ or z").matches(["x\\"]))
        #expect(try TagExpression("@with\\ space").matches(["@with space"]))
        #expect(!(try TagExpression("@with\\ space").matches(["@with"])))
    }

    @Test(
        "syntax errors read as Cucumber's",
        arguments: [
            ("@a @b or", "Expected operator."),
            ("@a and (@b not)", "Expected operator."),
            ("@a and (@b @c) or", "Expected operator."),
            ("@a and or", "Expected operand."),
            ("or or", "Expected operand."),
            ("a and", "Expected operand."),
            ("not", "Expected operand."),
            ("( a and b ) )", "Unmatched )."),
            ("( ( a and b )", "Unmatched (."),
            ("x or \\y or z", "Illegal escape before \"y\"."),
        ])
    func errors(expression: String, reason: String) {
        let error = #expect(throws: TagExpression.SyntaxError.self) { try TagExpression(expression) }
        #expect(
            error?.description
                == "Tag expression \"\(expression)\" could not be parsed because of syntax error: \(reason)")
    }
}
