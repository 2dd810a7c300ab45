import Foundation
import OrchestrateTesting
import Testing

/// `orchestrate run --mode compare` on the clinic example, and what it leaves for people: verdicts with the network
/// differences that explain them, HAR and JUnit files that standard parsers read, the HTML report.
@Suite("Verdicts, evidence and attachments")
struct VerdictTests {
    typealias Backend = ClinicExampleTests.Backend

    static let driftScenario = "Features/chat.feature: The bot offers to book an appointment"
    static let staleScenario = "Features/chat.feature: The bot greets whoever says hello [greeting=Hello]"
    static let failingScenario = "Features/farewell.feature: The bot says goodbye"

    @Test(
        "compare mode tells drift, a genuine failure and a stale recording from stable scenarios, with the changed field at its step"
    )
    func compareVerdicts() async throws {
        try await TemporaryDirectory.with { directory in
            let backend = try Backend(log: directory.file("backend.log"))
            defer { backend.stop() }
            try await backend.started()
            try ClinicExampleTests.project(in: directory, backendPort: backend.port)
            // A scenario that fails whatever the backend says: the bot never answers this.
            try directory.write(
                "Features/farewell.feature",
                """
                Feature: Farewell
                  Scenario: The bot says goodbye
                    Given I open the app
                    When I tell the bot "Goodbye"
                    Then the bot replies "See you soon!"
                """)
            let cli = OrchestrateCLI(
                directory: directory.path, database: try await TestPostgres.shared.makeDatabaseURL())
            let record = try await cli.run(["run", "--mode", "record", "--workers", "4", "--progress", "none"])
            #expect(record.exitCode == 1, "only the farewell fails while recording: \(record.stdout)\(record.stderr)")

            // The app changed after recording: its greeting cassette no longer fits (a stale recording).
            let greeting = directory.file(
                "Recordings/Features/chat/The_bot_greets_whoever_says_hello__greeting_Hello_.har")
            let cassette = try String(contentsOfFile: greeting, encoding: .utf8)
            #expect(cassette.contains("Hello! How can I help?"))
            try Data(cassette.replacingOccurrences(of: "Hello! How can I help?", with: "Hi! How can I help?").utf8)
                .write(
                    to: URL(fileURLWithPath: greeting))
            // The backend's content changed: the bot now offers "SURE" instead of "OK" (drift).
            backend.stop()
            let changed = try Backend(
                log: directory.file("backend-sure.log"), environment: ["CLINIC_CHAT_ANSWER": "SURE"])
            defer { changed.stop() }
            try await changed.started()
            try ClinicExampleTests.project(in: directory, backendPort: changed.port)

            let compare = try await cli.run([
                "run", "--mode", "compare", "--workers", "4", "--retries", "0", "--progress", "none",
            ])
            #expect(compare.exitCode == 1, "\(compare.stdout)\(compare.stderr)")
            #expect(
                compare.stdout.contains("verdicts: 6 stable, 1 failing, 1 drift, 1 stale-recording"),
                "\(compare.stdout)")
            #expect(
                compare.stdout.contains(
                    #"step 2 “When I tell the bot "I need an appointment"”: POST api.clinic.test/v1/chat/messages $.options[0].label: "OK" → "SURE""#
                ),
                "\(compare.stdout)")

            let database = try #require(cli.environment["ORCHESTRATE_DATABASE_URL"])
            let rows = try await queryRows(
                database,
                """
                SELECT scenario_id, verdict, verdict_reason, evidence::text, lanes::text FROM run_scenarios
                WHERE run_id = (SELECT id FROM runs ORDER BY created_at DESC LIMIT 1)
                """, as: (String, String, String, String, String).self)
            let verdicts = Dictionary(uniqueKeysWithValues: rows.map { ($0.0, $0.1) })
            #expect(verdicts[Self.driftScenario] == "drift")
            #expect(verdicts[Self.staleScenario] == "stale-recording")
            #expect(verdicts[Self.failingScenario] == "failing")
            #expect(verdicts.values.filter { $0 == "stable" }.count == 6, "\(verdicts)")
            #expect(
                rows.allSatisfy { $0.4.contains("\"live\"") && $0.4.contains("\"replay\"") },
                "every scenario ran in both lanes: \(rows.map(\.4))")

            let evidence = try #require(rows.first { $0.0 == Self.driftScenario }).3
            let differences = try #require(
                try JSONSerialization.jsonObject(with: Data(evidence.utf8)) as? [[String: Any]])
            let label = try #require(differences.first { $0["path"] as? String == "$.options[0].label" }, "\(evidence)")
            #expect(label["recorded"] as? String == #""OK""#)
            #expect(label["live"] as? String == #""SURE""#)
            #expect(label["step"] as? Int == 2)
            #expect(label["stepName"] as? String == #"When I tell the bot "I need an appointment""#)
            let stale = try #require(rows.first { $0.0 == Self.staleScenario }).3
            let staleDifferences = try #require(
                try JSONSerialization.jsonObject(with: Data(stale.utf8)) as? [[String: Any]])
            let reply = try #require(staleDifferences.first { $0["path"] as? String == "$.reply" }, "\(stale)")
            #expect(reply["recorded"] as? String == #""Hi! How can I help?""#)
            #expect(reply["stepName"] as? String == #"When I tell the bot "Hello""#)

            // The two lanes of every scenario ran on different worker slots (each with its own mock server).
            let lanes = try await queryRows(
                database,
                """
                SELECT scenario_id, count(DISTINCT worker)::int FROM attempts
                WHERE run_id = (SELECT id FROM runs ORDER BY created_at DESC LIMIT 1) GROUP BY scenario_id
                """, as: (String, Int).self)
            #expect(lanes.count == 9 && lanes.allSatisfy { $0.1 == 2 }, "\(lanes)")

            // The failures' network logs are attached, and standard parsers read them.
            let runID = try #require(compare.stdout.split(separator: " ").dropFirst().first.map(String.init))
            let reports = directory.file(".orchestrate/reports/\(runID)")
            let junit = try String(contentsOfFile: "\(reports)/junit.xml", encoding: .utf8)
            let attachments = junit.components(separatedBy: "[[ATTACHMENT|").dropFirst().compactMap {
                $0.components(separatedBy: "]]").first
            }
            let hars = attachments.filter { $0.hasSuffix(".har") }
            #expect(
                hars.contains { $0.contains("chat.feature__The_bot_offers_to_book_an_appointment/live-attempt-1.har") },
                "\(attachments)")
            #expect(hars.count == 4, "the drift's live attempt, the stale replay, both lanes of the failure: \(hars)")
            let parsed = try await Python.lines(
                script: """
                    import json, sys
                    from haralyzer import HarParser
                    from junitparser import JUnitXml
                    for path in sys.argv[2:]:
                        with open(path) as f:
                            entries = HarParser(json.load(f)).har_data["entries"]
                        print("har", path.split("/")[-2], len(entries), entries[0]["request"]["method"] if entries else "-")
                    for suite in JUnitXml.fromfile(sys.argv[1]):
                        for case in suite:
                            properties = {p.get("name"): p.get("value") for p in case._elem.iter("property")}
                            print("case", properties.get("orchestrate.verdict"), len(case.result), case.name)
                    """, arguments: ["\(reports)/junit.xml"] + hars,
                hint: "make test installs haralyzer and junitparser")
            #expect(parsed.filter { $0.hasPrefix("har ") }.count == 4, "\(parsed)")
            #expect(
                parsed.contains {
                    $0.hasPrefix("har Features_chat.feature__The_bot_offers_to_book_an_appointment ")
                        && !$0.hasSuffix(" 0 -")
                },
                "\(parsed)")
            #expect(parsed.contains("case drift 1 The bot offers to book an appointment"), "\(parsed)")
            #expect(parsed.contains("case stale-recording 1 The bot greets whoever says hello"), "\(parsed)")
            #expect(parsed.filter { $0.hasPrefix("case stable 0 ") }.count == 6, "\(parsed)")

            // orchestrate logs: the drifted live attempt, as a timeline and as HAR.
            let logs = try await cli.run(["logs", String(runID.prefix(8)), "bot offers", "--lane", "live"])
            #expect(logs.exitCode == 0, "\(logs.stderr)")
            #expect(
                logs.stdout.contains(#"failed    Then the bot offers the answers "OK" and "Not now""#), "\(logs.stdout)"
            )
            #expect(
                logs.stdout.contains("POST http://127.0.0.1:\(changed.port)/v1/chat/messages → 200"), "\(logs.stdout)")
            let har = try await cli.run(["logs", runID, Self.driftScenario, "--lane", "live", "--har"])
            let document = try JSONSerialization.jsonObject(with: Data(har.stdout.utf8)) as? [String: Any]
            let entries = (document?["log"] as? [String: Any])?["entries"] as? [[String: Any]]
            // The news feed fails the first request of every other client (the app retries it): 2 or 3 exchanges.
            let requests = (entries ?? []).compactMap {
                ($0["request"] as? [String: Any]).map { "\($0["method"] ?? "") \($0["url"] ?? "")" }
            }
            #expect(requests.last == "POST http://127.0.0.1:\(changed.port)/v1/chat/messages", "\(requests)")
            #expect(
                requests.dropLast().allSatisfy { $0 == "GET http://127.0.0.1:\(changed.port)/v1/news" }
                    && (2...3).contains(requests.count),
                "\(requests)")
            let unknown = try await cli.run(["logs", runID, "no such scenario"])
            #expect(unknown.exitCode == 2)
            #expect(
                unknown.stderr.contains("no scenario with history matches \"no such scenario\""), "\(unknown.stderr)")
        }
    }

    @Test(
        "an app version that does not retry the news feed is nondeterministic against the live backend, with the 500 at its step as evidence"
    )
    func nondeterministicAgainstTheBackend() async throws {
        try await TemporaryDirectory.with { directory in
            let backend = try Backend(log: directory.file("backend.log"))
            defer { backend.stop() }
            try await backend.started()
            // The backend fails the first news request of every other new client; this app version shows the error at
            // once. Each attempt is a new client: the outcome depends on how many came before, not on the app.
            try directory.write(
                "Features/news.feature",
                """
                Feature: News
                  Scenario: Headlines on the first try
                    Given I open the app without a second try
                    Then I see 3 headlines
                """)
            try ClinicExampleTests.project(in: directory, backendPort: backend.port)
            let cli = OrchestrateCLI(
                directory: directory.path, database: try await TestPostgres.shared.makeDatabaseURL())
            // Client 1: the news come at once, and the recording has them.
            let record = try await cli.run([
                "run", "--mode", "record", "--workers", "1", "--retries", "0", "--progress", "none",
            ])
            #expect(record.exitCode == 0, "\(record.stdout)\(record.stderr)")

            // Replay passes; live fails for client 2 and passes on its retry (client 3).
            let compare = try await cli.run([
                "run", "--mode", "compare", "--workers", "2", "--retries", "1", "--progress", "none",
            ])
            #expect(
                compare.exitCode == 0,
                "nondeterministic is not fatal without --strict: \(compare.stdout)\(compare.stderr)")
            #expect(compare.stdout.contains("verdicts: 1 nondeterministic"), "\(compare.stdout)")
            #expect(compare.stdout.contains("live: failed, then passed in this run"), "\(compare.stdout)")
            #expect(
                backend.requests.filter { $0.hasPrefix("GET /v1/news") } == [
                    "GET /v1/news 200", "GET /v1/news 500", "GET /v1/news 200",
                ],
                "\(backend.requests)")

            let database = try #require(cli.environment["ORCHESTRATE_DATABASE_URL"])
            let evidence = try #require(
                try await queryRows(
                    database,
                    """
                    SELECT verdict, evidence::text FROM run_scenarios WHERE run_id = (SELECT id FROM runs ORDER BY created_at DESC LIMIT 1)
                    """, as: (String, String).self
                ).first)
            #expect(evidence.0 == "nondeterministic")
            // The failed live attempt explains it: the news request answered 500 where the recording has 200, at step
            // 1.
            let differences = try #require(
                try JSONSerialization.jsonObject(with: Data(evidence.1.utf8)) as? [[String: Any]], "\(evidence.1)")
            let status = try #require(differences.first { $0["kind"] as? String == "status" }, "\(evidence.1)")
            #expect(status["request"] as? String == "GET api.clinic.test/v1/news", "\(status)")
            #expect(status["recorded"] as? String == "200" && status["live"] as? String == "500", "\(status)")
            #expect(
                status["step"] as? Int == 1
                    && status["stepName"] as? String == "Given I open the app without a second try", "\(status)")

            // Its pass rate by kind of backend: replay 1/1; live (record included) 2/3.
            let flaky = try await cli.run(["flaky", "--format", "json"])
            let line = try #require(
                (try JSONSerialization.jsonObject(with: Data(flaky.stdout.utf8)) as? [[String: Any]])?.first,
                "\(flaky.stdout)")
            let lanes = line["lanes"] as? [String: [String: Any]]
            #expect(lanes?["replay"]?["attempts"] as? Int == 1 && lanes?["replay"]?["passed"] as? Int == 1, "\(line)")
            #expect(lanes?["live"]?["attempts"] as? Int == 3 && lanes?["live"]?["passed"] as? Int == 2, "\(line)")
            #expect(abs((lanes?["live"]?["pass_rate"] as? Double ?? 0) - 2.0 / 3.0) < 1e-9, "\(line)")
            #expect((line["verdicts"] as? [String: Int])?["nondeterministic"] == 1, "\(line)")
        }
    }
}

@Suite("Flakiness history and quarantine")
struct FlakinessTests {
    @Test(
        "a scenario that fails and passes by turns is nondeterministic, scores up, is quarantined automatically; --strict still fails"
    )
    func nondeterministicAndQuarantine() async throws {
        try await TemporaryDirectory.with { directory in
            // Fails on every other call, whatever the run: a nondeterministic test.
            try directory.write(
                "orchestrate.yml",
                """
                workers: 2
                retries: 1
                quarantine: { threshold: 0.3 }
                suite:
                  scenarios:
                    - id: coin-flip
                      command: "n=$(cat \(directory.path)/count 2>/dev/null || echo 0); echo $((n + 1)) > \(directory.path)/count; [ $((n % 2)) -eq 1 ]"
                    - { id: steady, command: "true" }
                """)
            let cli = OrchestrateCLI(
                directory: directory.path, database: try await TestPostgres.shared.makeDatabaseURL())
            let first = try await cli.run(["run", "--progress", "none"])
            #expect(first.exitCode == 0, "failed then passed: flaky, not fatal: \(first.stdout)\(first.stderr)")
            #expect(
                first.stdout.contains("coin-flip  nondeterministic: failed, then passed in this run"),
                "no HTTP at all: no backend named: \(first.stdout)")
            let strict = try await cli.run(["run", "--progress", "none", "--strict"])
            #expect(strict.exitCode == 1, "--strict fails on a nondeterministic scenario: \(strict.stdout)")
            #expect(
                strict.stderr.contains("quarantined coin-flip: flakiness score reached 0.3"),
                "F P F P: 3 flips in 3 transitions, (3+1)/(3+10) = 0.31: \(strict.stderr)")

            let list = try await cli.run(["quarantine", "list", "--format", "json"])
            let entries = try #require(
                try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]], "\(list.stdout)")
            #expect(entries.map { $0["scenario_id"] as? String } == ["coin-flip"])
            #expect(entries.first?["automatic"] as? Bool == true)

            // Quarantined: its failure is reported, the run passes; --strict fails it.
            let third = try await cli.run(["run", "--progress", "none", "--retries", "0"])
            #expect(third.exitCode == 0, "\(third.stdout)\(third.stderr)")
            #expect(third.stdout.contains("coin-flip  nondeterministic (quarantined: not fatal)"), "\(third.stdout)")
            let runID = try #require(third.stdout.split(separator: " ").dropFirst().first.map(String.init))
            let junit = directory.read(".orchestrate/reports/\(runID)/junit.xml")
            #expect(
                junit.contains(
                    #"<skipped message="quarantined (orchestrate quarantine list): attempt 1 exited with status 1"/>"#),
                "\(junit)")
            #expect(junit.contains(#"<property name="orchestrate.quarantined" value="true"/>"#))
            let fourth = try await cli.run(["run", "--progress", "none", "--retries", "0"])
            #expect(fourth.exitCode == 0, "this one passes (n = 5): \(fourth.stdout)")
            let fifth = try await cli.run(["run", "--progress", "none", "--retries", "0", "--strict"])
            #expect(fifth.exitCode == 1, "\(fifth.stdout)")

            // orchestrate flaky: the score, the counts, the verdicts, highest first.
            let flaky = try await cli.run(["flaky", "--format", "json"])
            let lines = try #require(
                try JSONSerialization.jsonObject(with: Data(flaky.stdout.utf8)) as? [[String: Any]], "\(flaky.stdout)")
            #expect(lines.map { $0["scenario_id"] as? String } == ["coin-flip", "steady"])
            let coin = lines[0]
            #expect(
                coin["attempts"] as? Int == 7 && coin["passed"] as? Int == 3 && coin["flips"] as? Int == 6
                    && coin["transitions"] as? Int == 6,
                "\(coin)")
            #expect(abs((coin["score"] as? Double ?? 0) - 7.0 / 16.0) < 1e-9, "(6 + 1) / (6 + 10): \(coin)")
            #expect((coin["verdicts"] as? [String: Int])?["nondeterministic"] == 5, "\(coin)")
            #expect(
                (coin["lanes"] as? [String: Any]).map { Array($0.keys) } == ["replay"],
                "a controlled backend only: \(coin)")
            #expect(coin["quarantined"] as? Bool == true)
            #expect(
                abs((lines[1]["score"] as? Double ?? 0) - 1.0 / 14.0) < 1e-9,
                "5 passes, no flip: (0 + 1) / (4 + 10): \(lines[1])")
            // The steady scenario's verdicts were stored as its passes settled; coin-flip's passes got theirs
            // rewritten.
            #expect((lines[1]["verdicts"] as? [String: Int]) == ["stable": 5], "\(lines[1])")
            let table = try await cli.run(["flaky"])
            #expect(
                table.stdout.contains("0.44 Q  3/7     6/6    5 nondeterministic  coin-flip")
                    && !table.stdout.contains("REPLAY") && !table.stdout.contains("LIVE"),
                "passed 3 of 7, with no backends to tell apart: \(table.stdout)")

            // By hand: add, list, remove; unknown scenarios and removing twice are usage errors.
            #expect(try await cli.run(["quarantine", "add", "steady", "--reason", "flaky on CI"]).exitCode == 0)
            let both = try await cli.run(["quarantine", "list"])
            #expect(
                both.stdout.contains("steady") && both.stdout.contains("hand") && both.stdout.contains("flaky on CI"),
                "\(both.stdout)")
            #expect(try await cli.run(["quarantine", "remove", "steady"]).exitCode == 0)
            let again = try await cli.run(["quarantine", "remove", "steady"])
            #expect(again.exitCode == 2 && again.stderr.contains("steady is not quarantined"), "\(again.stderr)")
            #expect(try await cli.run(["quarantine", "add", "nope"]).exitCode == 2)
        }
    }
}
