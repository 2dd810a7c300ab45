import Foundation
import Testing

@testable import OrchestrateKit

@Suite struct StepExpressionTests {
    static let matches: [(String, String, [StepValue]?)] = [
        ("I have {int} cucumbers", "I have 42 cucumbers", [.int(42)]),
        ("I have {int} cucumbers", "I have -3 cucumbers", [.int(-3)]),
        ("I have {int} cucumbers", "I have 4.2 cucumbers", nil),
        ("it costs {float} euros", "it costs 2.50 euros", [.double(2.5)]),
        ("it costs {float} euros", "it costs .5 euros", [.double(0.5)]),
        ("it costs {float} euros", "it costs 3 euros", [.double(3)]),
        ("I am {word}", "I am Ann", [.string("Ann")]),
        ("I am {word}", "I am Ann Lee", nil),
        ("I say {string}", #"I say "hello there""#, [.string("hello there")]),
        ("I say {string}", "I say 'it''s'", nil),
        ("I say {string}", #"I say 'say \'hi\''"#, [.string("say 'hi'")]),
        ("I say {string} to {string}", #"I say "" to "Bo""#, [.string(""), .string("Bo")]),
        ("anything {} goes", "anything at all goes", [.string("at all")]),
        ("I have {int} cucumber(s)", "I have 1 cucumber", [.int(1)]),
        ("I have {int} cucumber(s)", "I have 2 cucumbers", [.int(2)]),
        ("it is in my belly/stomach", "it is in my stomach", []),
        ("it is in my belly/stomach", "it is in my belly", []),
        ("it is in my belly/stomach", "it is in my bellystomach", nil),
        ("I have {int} cucumber(s) in my belly/stomach/tummy", "I have 3 cucumbers in my tummy", [.int(3)]),
        ("the answer is OK/SURE(!)", "the answer is SURE!", []),
        (#"a \(literal) paren and a \/ slash"#, "a (literal) paren and a / slash", []),
        (#"braces \{int}"#, "braces {int}", []),
        ("dots. mean dots", "dots. mean dots", []),
        ("a lone ) and } are text", "a lone ) and } are text", []),
        ("dots. mean dots", "dotsX mean dots", nil),
        ("a (big) cat", "a  cat", []),
        ("a (big) cat", "a big cat", []),
        ("a (big black) cat", "a big black cat", []),
    ]

    @Test("Cucumber expressions match and convert like Cucumber's", arguments: matches)
    func matchesCucumberExpressions(_ expression: String, _ text: String, _ expected: [StepValue]?) throws {
        let compiled = try StepExpression(expression: expression, types: ParameterType.builtIn)
        #expect(try compiled.match(text) == expected)
    }

    static let errors: [(String, String)] = [
        ("I have {color} cats", #"column 8: there is no parameter type {color}"#),
        ("I have () cats", "column 8: an optional is empty"),
        ("I have ({int}) cats", "column 9: an optional may not contain a parameter"),
        ("I have (a (b)) cats", "column 11: optionals may not be nested"),
        ("I have a/ cat", "an alternative is empty"),
        ("I have (a)/b cat", "an alternative may not be only optional text"),
        ("I have {int cats", "column 8: the { is not closed"),
        ("I have (int cats", "column 8: the ( is not closed"),
    ]

    @Test("an expression that does not compile says where and why", arguments: errors)
    func rejectsBadExpressions(_ expression: String, _ message: String) {
        #expect {
            _ = try StepExpression(expression: expression, types: ParameterType.builtIn)
        } throws: { error in
            "\(error)".contains(message) && "\(error)".contains(expression)
        }
    }

    @Test("custom parameter types and regular expressions")
    func customTypesAndRegexes() throws {
        var types = ParameterType.builtIn
        types["color"] = ParameterType(name: "color", regex: "red|green|blue") { .string($0.uppercased()) }
        let colored = try StepExpression(expression: "a {color} car", types: types)
        #expect(try colored.match("a green car") == [.string("GREEN")])
        #expect(try colored.match("a pink car") == nil)

        let regex = try StepExpression(regex: #"the bot offers "(OK|SURE)" after (\d+) seconds?"#)
        #expect(try regex.match(#"the bot offers "SURE" after 2 seconds"#) == [.string("SURE"), .string("2")])
        // A regular expression must match the whole text.
        #expect(try regex.match(#"then the bot offers "OK" after 1 second"#) == nil)
        #expect(throws: OrchestrateKitError.self) { try StepExpression(regex: "unclosed (") }
        // A value that does not fit its type is a failure that names it, not a silent mismatch.
        let huge = try StepExpression(expression: "I have {int} cats", types: types)
        #expect { try huge.match("I have 99999999999999999999999 cats") } throws: {
            "\($0)".contains("is not a valid {int}")
        }
    }
}
