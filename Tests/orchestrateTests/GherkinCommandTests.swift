import Foundation
import Testing
import OrchestrateTesting

@Suite("Gherkin suites from the command line")
struct GherkinCommandTests {
    func json(_ text: String) throws -> Any { try JSONSerialization.jsonObject(with: Data(text.utf8)) }

    func lines(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map { try #require(try json(String($0)) as? [String: Any]) }
    }

    static let checkout = """
        @shop
        Feature: Checkout

          Background:
            Given a cart

          Scenario Outline: paying with <method>
            When I pay with <method>
            Then I see "<result>"

            @cards
            Examples:
              | method | result   |
              | visa   | paid     |
              | amex   | declined |

          Rule: returns
            Scenario: a return
              When I return it
        """

    @Test("gherkin pickles prints Cucumber's pickle envelopes, and for a broken file parseError envelopes, file:line:column on stderr and exit 2")
    func pickles() async throws {
        try await TemporaryDirectory.with { directory in
            try directory.write("checkout.feature", Self.checkout)
            try directory.write("broken.feature", "Feature: broken\n  Scenario: s\n    Given a\n      | a |\n      | b | c |\nnot gherkin here\n")
            let cli = OrchestrateCLI(directory: directory.path, database: "postgresql://unused@/none")
            let good = try await cli.run(["gherkin", "pickles", "checkout.feature"])
            #expect(good.exitCode == 0, "\(good.stderr)")
            let pickles = try lines(good.stdout).compactMap { $0["pickle"] as? [String: Any] }
            #expect(pickles.map { $0["name"] as? String } == ["paying with visa", "paying with amex", "a return"])
            let first = try #require(pickles.first)
            let steps = try #require(first["steps"] as? [[String: Any]])
            #expect(steps.map { $0["text"] as? String } == ["a cart", "I pay with visa", #"I see "paid""#])
            #expect(steps.map { $0["type"] as? String } == ["Context", "Action", "Outcome"])
            #expect((first["tags"] as? [[String: Any]])?.map { $0["name"] as? String } == ["@shop", "@cards"])
            #expect((first["location"] as? [String: Int]) == ["line": 14, "column": 7])

            let bad = try await cli.run(["gherkin", "pickles", "broken.feature", "missing.feature"])
            #expect(bad.exitCode == 2)
            let errors = try lines(bad.stdout).compactMap { $0["parseError"] as? [String: Any] }
            // In the order Cucumber finds them: the table is checked when it ends, after the line that broke it.
            #expect(errors.map { $0["message"] as? String } == [
                "(6:1): expected: #EOF, #TableRow, #DocStringSeparator, #StepLine, #TagLine, #ExamplesLine, #ScenarioLine, #RuleLine, #Comment, #Empty, got 'not gherkin here'",
                "(5:7): inconsistent cell count within the table",
            ])
            #expect(bad.stderr.contains("broken.feature:5:7: inconsistent cell count within the table"), "\(bad.stderr)")
            #expect(bad.stderr.contains("missing.feature: no such file"), "\(bad.stderr)")
        }
    }

    @Test("suite.gherkin makes every pickle a scenario with a stable id; file:line selects; history survives reordering")
    func discovery() async throws {
        try await TemporaryDirectory.with { directory in
            try directory.write("Features/shop/checkout.feature", Self.checkout)
            try directory.write("Features/search.feature", "Feature: Search\n  @smoke\n  Scenario: by name\n    When I search\n")
            try directory.write("orchestrate.yml", """
                workers: 2
                suite:
                  command: "printf '%s|%s|%s|%s|%s\\n' {uri} {line} {name} \\"$ORCHESTRATE_GHERKIN_URI\\" \\"$ORCHESTRATE_GHERKIN_LINE\\" >> ran.txt"
                  gherkin: ["Features/**/*.feature"]
                """)
            let cli = OrchestrateCLI(directory: directory.path, database: try await TestPostgres.shared.makeDatabaseURL())
            let listed = try await cli.run(["scenarios", "--format", "json"])
            #expect(listed.exitCode == 0, "\(listed.stderr)")
            let ids = try #require(try json(listed.stdout) as? [[String: Any]]).compactMap { $0["id"] as? String }
            #expect(Set(ids) == [
                "Features/search.feature: by name",
                "Features/shop/checkout.feature: paying with <method> [method=visa, result=paid]",
                "Features/shop/checkout.feature: paying with <method> [method=amex, result=declined]",
                "Features/shop/checkout.feature: a return",
            ])

            // An outline's line selects its rows; a row's line that row; a plain file path all its scenarios.
            let outline = try await cli.run(["run", "--only", "Features/shop/checkout.feature:7", "--progress", "none"])
            #expect(outline.exitCode == 0, "\(outline.stderr)")
            var ran = try String(contentsOfFile: directory.file("ran.txt"), encoding: .utf8).split(separator: "\n").sorted()
            #expect(ran == [
                "Features/shop/checkout.feature|14|paying with visa|Features/shop/checkout.feature|14",
                "Features/shop/checkout.feature|15|paying with amex|Features/shop/checkout.feature|15",
            ])
            try FileManager.default.removeItem(atPath: directory.file("ran.txt"))
            let row = try await cli.run(["run", "--only", "Features/shop/checkout.feature:15", "Features/search.feature", "--progress", "none"])
            #expect(row.exitCode == 0, "\(row.stderr)")
            ran = try String(contentsOfFile: directory.file("ran.txt"), encoding: .utf8).split(separator: "\n").sorted()
            #expect(ran.map { $0.split(separator: "|")[2] } == ["by name", "paying with amex"])
            let nothing = try await cli.run(["run", "--only", "Features/shop/checkout.feature:2"])
            #expect(nothing.exitCode == 2 && nothing.stderr.contains("no such scenario id or feature FILE[:LINE]"), "\(nothing.stderr)")

            // Rows and scenarios reordered: the ids, and so the history (expected durations), stay.
            try directory.write("Features/shop/checkout.feature", Self.checkout
                .replacingOccurrences(of: "      | visa   | paid     |\n      | amex   | declined |", with: "      | amex   | declined |\n      | visa   | paid     |"))
            let again = try await cli.run(["scenarios", "--format", "json"])
            let entries = try #require(try json(again.stdout) as? [[String: Any]])
            let amex = try #require(entries.first { ($0["id"] as? String)?.contains("method=amex") == true })
            #expect(amex["line"] as? Int == 14)
            #expect(amex["expected_ms"] != nil, "history should follow the row: \(amex)")
        }
    }

    @Test("a feature file that does not parse, or a pattern that matches nothing, is one error naming file:line and exit 2")
    func badSuites() async throws {
        try await TemporaryDirectory.with { directory in
            try directory.write("Features/a.feature", "Feature: a\n  Scenario: s\n    Given x\n  @bad tag\n  Scenario: t\n")
            try directory.write("orchestrate.yml", "suite:\n  command: 'true'\n  gherkin: [\"Features/*.feature\"]\n")
            let cli = OrchestrateCLI(directory: directory.path, database: try await TestPostgres.shared.makeDatabaseURL())
            let broken = try await cli.run(["run"])
            #expect(broken.exitCode == 2)
            #expect(broken.stderr.contains("Features/a.feature:4:3: A tag may not contain whitespace"), "\(broken.stderr)")

            try directory.write("orchestrate.yml", "suite:\n  command: 'true'\n  gherkin: [\"Specs/**/*.feature\"]\n")
            let empty = try await cli.run(["scenarios"])
            #expect(empty.exitCode == 2)
            #expect(empty.stderr.contains("orchestrate.yml:3") && empty.stderr.contains("matches no feature file"), "\(empty.stderr)")

            try directory.write("orchestrate.yml", "suite:\n  gherkin: [\"Features/*.feature\"]\n")
            let template = try await cli.run(["scenarios"])
            #expect(template.exitCode == 2 && template.stderr.contains("suite.gherkin needs suite.command"), "\(template.stderr)")
        }
    }
}
