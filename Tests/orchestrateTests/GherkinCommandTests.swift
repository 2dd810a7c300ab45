import Foundation
import Logging
import OrchestrateTesting
import PostgresNIO
import Store
import Testing

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

    @Test(
        "gherkin pickles prints Cucumber's pickle envelopes, and for a broken file parseError envelopes, file:line:column on stderr and exit 2"
    )
    func pickles() async throws {
        try await TemporaryDirectory.with { directory in
            try directory.write("checkout.feature", Self.checkout)
            try directory.write(
                "broken.feature",
                "Feature: broken\n  Scenario: s\n    Given a\n      | a |\n      | b | c |\nnot gherkin here\n")
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
            #expect(
                errors.map { $0["message"] as? String } == [
                    "(6:1): expected: #EOF, #TableRow, #DocStringSeparator, #StepLine, #TagLine, #ExamplesLine, #ScenarioLine, #RuleLine, #Comment, #Empty, got 'not gherkin here'",
                    "(5:7): inconsistent cell count within the table",
                ])
            #expect(
                bad.stderr.contains("broken.feature:5:7: inconsistent cell count within the table"), "\(bad.stderr)")
            #expect(bad.stderr.contains("missing.feature: no such file"), "\(bad.stderr)")
        }
    }

    @Test(
        "suite.gherkin makes every pickle a scenario with a stable id; file:line selects; history survives reordering")
    func discovery() async throws {
        try await TemporaryDirectory.with { directory in
            try directory.write("Features/shop/checkout.feature", Self.checkout)
            try directory.write(
                "Features/search.feature", "Feature: Search\n  @smoke\n  Scenario: by name\n    When I search\n")
            try directory.write(
                "orchestrate.yml",
                """
                workers: 2
                suite:
                  command: "printf '%s|%s|%s|%s|%s\\n' {uri} {line} {name} \\"$ORCHESTRATE_GHERKIN_URI\\" \\"$ORCHESTRATE_GHERKIN_LINE\\" >> ran.txt"
                  gherkin: ["Features/**/*.feature"]
                """)
            let cli = OrchestrateCLI(
                directory: directory.path, database: try await TestPostgres.shared.makeDatabaseURL())
            let listed = try await cli.run(["scenarios", "--format", "json"])
            #expect(listed.exitCode == 0, "\(listed.stderr)")
            let ids = try #require(try json(listed.stdout) as? [[String: Any]]).compactMap { $0["id"] as? String }
            #expect(
                Set(ids) == [
                    "Features/search.feature: by name",
                    "Features/shop/checkout.feature: paying with <method> [method=visa, result=paid]",
                    "Features/shop/checkout.feature: paying with <method> [method=amex, result=declined]",
                    "Features/shop/checkout.feature: a return",
                ])

            // An outline's line selects its rows; a row's line that row; a plain file path all its scenarios.
            let outline = try await cli.run(["run", "--only", "Features/shop/checkout.feature:7", "--progress", "none"])
            #expect(outline.exitCode == 0, "\(outline.stderr)")
            var ran = try String(contentsOfFile: directory.file("ran.txt"), encoding: .utf8).split(separator: "\n")
                .sorted()
            #expect(
                ran == [
                    "Features/shop/checkout.feature|14|paying with visa|Features/shop/checkout.feature|14",
                    "Features/shop/checkout.feature|15|paying with amex|Features/shop/checkout.feature|15",
                ])
            try FileManager.default.removeItem(atPath: directory.file("ran.txt"))
            let row = try await cli.run([
                "run", "--only", "Features/shop/checkout.feature:15", "Features/search.feature", "--progress", "none",
            ])
            #expect(row.exitCode == 0, "\(row.stderr)")
            ran = try String(contentsOfFile: directory.file("ran.txt"), encoding: .utf8).split(separator: "\n").sorted()
            #expect(ran.map { $0.split(separator: "|")[2] } == ["by name", "paying with amex"])
            let nothing = try await cli.run(["run", "--only", "Features/shop/checkout.feature:2"])
            #expect(
                nothing.exitCode == 2 && nothing.stderr.contains("no such scenario id or feature FILE[:LINE]"),
                "\(nothing.stderr)")

            // Rows and scenarios reordered: the ids, and so the history (expected durations), stay.
            try directory.write(
                "Features/shop/checkout.feature",
                Self.checkout
                    .replacingOccurrences(
                        of: "      | visa   | paid     |\n      | amex   | declined |",
                        with: "      | amex   | declined |\n      | visa   | paid     |"))
            let again = try await cli.run(["scenarios", "--format", "json"])
            let entries = try #require(try json(again.stdout) as? [[String: Any]])
            let amex = try #require(entries.first { ($0["id"] as? String)?.contains("method=amex") == true })
            #expect(amex["line"] as? Int == 14)
            #expect(amex["expected_ms"] != nil, "history should follow the row: \(amex)")
        }
    }

    @Test(
        "a feature file that does not parse, or a pattern that matches nothing, is one error naming file:line and exit 2"
    )
    func badSuites() async throws {
        try await TemporaryDirectory.with { directory in
            try directory.write(
                "Features/a.feature", "Feature: a\n  Scenario: s\n    Given x\n  @bad tag\n  Scenario: t\n")
            try directory.write("orchestrate.yml", "suite:\n  command: 'true'\n  gherkin: [\"Features/*.feature\"]\n")
            let cli = OrchestrateCLI(
                directory: directory.path, database: try await TestPostgres.shared.makeDatabaseURL())
            let broken = try await cli.run(["run"])
            #expect(broken.exitCode == 2)
            #expect(
                broken.stderr.contains("Features/a.feature:4:3: A tag may not contain whitespace"), "\(broken.stderr)")

            try directory.write("orchestrate.yml", "suite:\n  command: 'true'\n  gherkin: [\"Specs/**/*.feature\"]\n")
            let empty = try await cli.run(["scenarios"])
            #expect(empty.exitCode == 2)
            #expect(
                empty.stderr.contains("orchestrate.yml:3") && empty.stderr.contains("matches no feature file"),
                "\(empty.stderr)")

            try directory.write("orchestrate.yml", "suite:\n  gherkin: [\"Features/*.feature\"]\n")
            let template = try await cli.run(["scenarios"])
            #expect(
                template.exitCode == 2 && template.stderr.contains("suite.gherkin needs suite.command"),
                "\(template.stderr)")
        }
    }

    @Test(
        "steps a scenario writes as Cucumber Messages NDJSON or Cucumber JSON land in PostgreSQL with their timings, exchanges under them"
    )
    func stepReports() async throws {
        try await TemporaryDirectory.with { directory in
            try directory.write(
                "Features/reports.feature",
                """
                Feature: Reports
                  Scenario: messages
                    Given the app is open
                    When I load the slots
                    Then I see them

                  Scenario: cucumber json
                    Given a step
                    Then a failing step
                """)
            // A runner that reports as Cucumber does: timestamps around each step; the "When" step calls the backend.
            try directory.write(
                "runner.py",
                """
                import json, os, sys, time, urllib.request
                out = os.environ["ORCHESTRATE_ARTIFACTS_DIR"]
                def ts():
                    t = time.time_ns()
                    return {"seconds": t // 1_000_000_000, "nanos": t % 1_000_000_000}
                if sys.argv[1] == "messages":
                    events = [
                        {"gherkinDocument": {"feature": {"children": [{"scenario": {"steps": [
                            {"id": "g1", "keyword": "Given ", "text": "the app is open"},
                            {"id": "g2", "keyword": "When ", "text": "I load the slots"},
                            {"id": "g3", "keyword": "Then ", "text": "I see them"}]}}]}}},
                        {"pickle": {"id": "p", "steps": [{"id": "s1", "text": "the app is open", "astNodeIds": ["g1"]},
                            {"id": "s2", "text": "I load the slots", "astNodeIds": ["g2"]}, {"id": "s3", "text": "I see them", "astNodeIds": ["g3"]}]}},
                        {"testCase": {"id": "tc", "pickleId": "p", "testSteps": [{"id": "h", "hookId": "hook"},
                            {"id": "t1", "pickleStepId": "s1"}, {"id": "t2", "pickleStepId": "s2"}, {"id": "t3", "pickleStepId": "s3"}]}},
                    ]
                    for step in ["h", "t1", "t2", "t3"]:
                        events.append({"testStepStarted": {"testCaseStartedId": "run", "testStepId": step, "timestamp": ts()}})
                        time.sleep(0.05)
                        if step == "t2":
                            urllib.request.urlopen(os.environ["ORCHESTRATE_MOCK_URL"] + "/api.test/slots").read()
                            time.sleep(0.05)
                        events.append({"testStepFinished": {"testCaseStartedId": "run", "testStepId": step, "timestamp": ts(),
                            "testStepResult": {"status": "PASSED", "duration": {"seconds": 0, "nanos": 50000000}}}})
                    with open(os.path.join(out, "cucumber.ndjson"), "w") as f:
                        f.write("\\n".join(json.dumps(e) for e in events) + "\\n")
                else:
                    report = [{"name": "Reports", "elements": [{"name": "cucumber json", "steps": [
                        {"keyword": "Given ", "name": "a step", "result": {"status": "passed", "duration": 20000000}},
                        {"keyword": "Then ", "name": "a failing step", "result": {"status": "failed", "duration": 30000000, "error_message": "expected 2, got 3"}}]}]}]
                    with open(os.path.join(out, "cucumber.json"), "w") as f:
                        json.dump(report, f)
                """)
            try directory.write(
                "orchestrate.yml",
                """
                workers: 2
                suite:
                  command: "python3 runner.py {name}"
                  gherkin: ["Features/*.feature"]
                mock:
                  mode: mock
                  hosts: { api.test: "http://127.0.0.1:9" }
                  stubs:
                    - request: { host: api.test, path: /slots }
                      response: { status: 200, json: { slots: [mon] } }
                """)
            let cli = OrchestrateCLI(
                directory: directory.path, database: try await TestPostgres.shared.makeDatabaseURL())
            let run = try await cli.run(["run", "--progress", "none"])
            #expect(run.exitCode == 0, "\(run.stdout)\(run.stderr)")

            let steps = try await Self.storedSteps(try #require(cli.environment["ORCHESTRATE_DATABASE_URL"]))
            #expect(
                steps.map { "\($0.scenario)|\($0.text)|\($0.position)|\($0.exchanges)" } == [
                    "cucumber json|Given a step|1|0",
                    "cucumber json|Then a failing step|2|0",
                    "messages|Given the app is open|1|0",
                    "messages|When I load the slots|2|1",
                    "messages|Then I see them|3|0",
                ])
            #expect(steps.allSatisfy { $0.seconds >= 0.019 }, "every step has its duration: \(steps.map(\.seconds))")
            #expect(
                try #require(steps.count > 1 ? steps[1] : nil, "no second step stored: \(steps)").error
                    == "expected 2, got 3")

            // A pickle's cassette goes under its feature's path (Recordings/<feature>/<scenario>.har).
            let record = try await cli.run([
                "run", "--mode", "record", "--only", "Features/reports.feature:7", "--progress", "none",
            ])
            #expect(record.exitCode == 0, "\(record.stdout)\(record.stderr)")
            #expect(
                FileManager.default.fileExists(atPath: directory.file("Recordings/Features/reports/cucumber_json.har")))
        }
    }

    @Test(
        "a suite.gherkin suite run by behave (PyPI) itself: its JSON report's steps land with seconds as seconds, the failure's location, the steps after it skipped"
    )
    func behaveReports() async throws {
        try await TemporaryDirectory.with { directory in
            try directory.write(
                "features/cart.feature",
                """
                Feature: Cart
                  Scenario: Adding an item
                    Given an empty cart
                    When I add 2 apples
                    Then the cart holds 2 items

                  Scenario: A wrong total
                    Given an empty cart
                    When I add 2 apples
                    Then the cart holds 3 items
                    And the receipt is printed
                """)
            try directory.write(
                "features/steps/cart.py",
                """
                import time
                from behave import given, when, then

                @given("an empty cart")
                def step_empty(context):
                    context.items = 0

                @when("I add {count:d} apples")
                def step_add(context, count):
                    time.sleep(0.05)
                    context.items += count

                @then("the cart holds {count:d} items")
                def step_holds(context, count):
                    assert context.items == count, f"the cart holds {context.items}, not {count}"

                @then("the receipt is printed")
                def step_receipt(context):
                    pass
                """)
            try directory.write(
                "orchestrate.yml",
                """
                workers: 2
                suite:
                  command: "python3 -m behave --no-capture -f json -o $ORCHESTRATE_ARTIFACTS_DIR/behave.json {uri}:{line}"
                  gherkin: ["features/*.feature"]
                  env: { PYTHONDONTWRITEBYTECODE: "1" }
                """)
            let cli = OrchestrateCLI(
                directory: directory.path, database: try await TestPostgres.shared.makeDatabaseURL())
            let run = try await cli.run(["run", "--retries", "0", "--progress", "none"])
            #expect(run.exitCode == 1, "the wrong total fails: \(run.stdout)\(run.stderr)")
            let steps = try await Self.storedSteps(try #require(cli.environment["ORCHESTRATE_DATABASE_URL"]))
            #expect(
                steps.map { "\($0.scenario)|\($0.text)|\($0.status)" } == [
                    "A wrong total|Given an empty cart|passed",
                    "A wrong total|When I add 2 apples|passed",
                    "A wrong total|Then the cart holds 3 items|failed",
                    "A wrong total|And the receipt is printed|skipped",
                    "Adding an item|Given an empty cart|passed",
                    "Adding an item|When I add 2 apples|passed",
                    "Adding an item|Then the cart holds 2 items|passed",
                ], "\(steps)")
            // behave's seconds are seconds: the 50 ms step is neither 50 ns nor 50 s.
            for step in steps where step.text.hasPrefix("When") {
                #expect(step.seconds >= 0.045 && step.seconds < 5, "\(step)")
            }
            let failed = try #require(steps.count > 2 ? steps[2] : nil, "no third step stored: \(steps)")
            #expect(failed.error == "features/cart.feature:10: ASSERT FAILED: the cart holds 2, not 3", "\(failed)")

            // suite.results: the report decides, not the exit status — a runner that exits 0 whatever happened still
            // fails the wrong total, with the failure's message, and keeps its Gherkin steps.
            let config = try String(contentsOfFile: directory.file("orchestrate.yml"), encoding: .utf8)
            try directory.write(
                "orchestrate.yml",
                config.replacingOccurrences(
                    of: "{uri}:{line}\"", with: "{uri}:{line}; exit 0\"\n  results: cucumber-json"))
            var judged = cli
            judged.environment["ORCHESTRATE_DATABASE_URL"] = try await TestPostgres.shared.makeDatabaseURL()
            let byReport = try await judged.run(["run", "--retries", "0", "--progress", "none"])
            #expect(byReport.exitCode == 1, "\(byReport.stdout)\(byReport.stderr)")
            #expect(byReport.stdout.contains("2 scenarios, 1 passed, 1 failed"), "\(byReport.stdout)")
            #expect(
                byReport.stdout.contains("failed: the cart holds 2, not 3")
                    || byReport.stdout.contains("ASSERT FAILED"), "\(byReport.stdout)")
            #expect(try await Self.storedSteps(try #require(judged.environment["ORCHESTRATE_DATABASE_URL"])).count == 7)
        }
    }

    /// A step as the database holds it, with the exchanges that fall in it.
    struct StoredStep {
        var scenario: String
        /// Keyword and name: `Given a step`.
        var text: String
        var position: Int32
        var status: String
        var seconds: Double
        var error: String?
        var exchanges: Int32
    }

    /// Every stored step, by scenario name and position.
    static func storedSteps(_ database: String) async throws -> [StoredStep] {
        try await queryRows(
            database,
            """
            SELECT sc.name, s.keyword || s.name, s.position, s.status, extract(epoch FROM s.finished_at - s.started_at)::float8, s.error,
                   (SELECT count(*)::int FROM exchange_log e WHERE e.attempt_id = s.attempt_id AND e.step = s.position)
            FROM steps s JOIN attempts a ON a.id = s.attempt_id JOIN scenarios sc ON sc.id = a.scenario_id
            ORDER BY sc.name, s.position
            """, as: (String, String, Int32, String, Double, String?, Int32).self
        ).map {
            StoredStep(
                scenario: $0.0, text: $0.1, position: $0.2, status: $0.3, seconds: $0.4, error: $0.5, exchanges: $0.6)
        }
    }
}
