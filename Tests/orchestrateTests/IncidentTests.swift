import Foundation
import OrchestrateTesting
import Testing

/// An upstream taken down in the middle of a run is reported as one infrastructure incident, not as a failure of each
/// test it hit: against a real backend the test starts and stops.
@Suite("Outages as incidents", .timeLimit(.minutes(5)))
struct IncidentTests {
    /// Two tests that pass before the outage, four that make their request after it, and `extra` scenarios.
    static func config(_ upstream: TestUpstream, directory: TemporaryDirectory, extra: String = "") -> String {
        let after = (1...4).map { number in
            // Each waits (up to 30 s) for the outage the test makes, then asks the backend.
            #"    - { id: after-\#(number), command: "for i in $(seq 300); do [ -e \#(directory.path)/down ] && break; sleep 0.1; done; curl -sf $ORCHESTRATE_MOCK_URL/api.test/v1/items > /dev/null" }"#
        }
        return """
            workers: 8
            retries: { count: 1, when: evidence }
            quarantine: { threshold: 0.15 }
            suite:
              scenarios:
                - { id: before-1, command: "curl -sf $ORCHESTRATE_MOCK_URL/api.test/v1/items > /dev/null && touch \(directory.path)/before-1" }
                - { id: before-2, command: "curl -sf $ORCHESTRATE_MOCK_URL/api.test/v1/items > /dev/null && touch \(directory.path)/before-2" }
            \(after.joined(separator: "\n"))
            \(extra)
            mock:
              mode: live
              hosts: { api.test: "\(upstream.url)" }
            """
    }

    /// Runs the project with a fresh upstream, taken down once both `before` tests passed when `outage`.
    static func run(
        _ cli: OrchestrateCLI, directory: TemporaryDirectory, outage: Bool, extra: String = ""
    ) async throws -> OrchestrateCLI.Result {
        try await TestUpstream.with { upstream in
            for file in ["down", "before-1", "before-2"] {
                try? FileManager.default.removeItem(atPath: directory.file(file))
            }
            try directory.write("orchestrate.yml", config(upstream, directory: directory, extra: extra))
            if !outage { try directory.write("down", "") }
            async let run = cli.run(["run", "--progress", "none"])
            if outage {
                let passed = await eventually(timeout: .seconds(60)) {
                    FileManager.default.fileExists(atPath: directory.file("before-1"))
                        && FileManager.default.fileExists(atPath: directory.file("before-2"))
                }
                await upstream.takeDown()
                try directory.write("down", "")
                #expect(passed, "the tests before the outage passed")
            }
            return try await run
        }
    }

    @Test(
        "a backend taken down mid-run: one incident naming the host, its first and last failing exchange and the tests it hit; exit 3; no flakiness, no quarantine"
    )
    func outageMidRun() async throws {
        try await TemporaryDirectory.with { directory in
            let url = try await TestPostgres.shared.makeDatabaseURL()
            var cli = OrchestrateCLI(directory: directory.path, database: url)
            cli.environment["GITHUB_ACTIONS"] = "true"
            cli.environment["GITHUB_STEP_SUMMARY"] = directory.file("step-summary.md")
            let run = try await Self.run(cli, directory: directory, outage: true)
            #expect(run.exitCode == 3, "only the outage failed the tests: infrastructure\n\(run.stdout)\(run.stderr)")
            let headline = try #require(
                run.stdout.split(separator: "\n").first { $0.hasPrefix("run ") }, "\(run.stdout)")
            let runID = String(headline.split(separator: " ")[1])
            #expect(
                run.stdout.contains("infrastructure incident 1: api.test did not answer")
                    && run.stdout.contains("in 8 failed attempts of 4 tests"),
                "each of the four was retried (no answer is evidence) and failed again: \(run.stdout)")
            #expect(run.stdout.contains("  first: GET api.test/v1/items → no answer"), "\(run.stdout)")
            #expect(run.stdout.contains("  last:  GET api.test/v1/items → no answer"), "\(run.stdout)")
            #expect(run.stdout.contains("  tests: after-1, after-2, after-3, after-4\n"), "\(run.stdout)")
            #expect(!run.stdout.contains("needs a look"), "no test is a failure of its own: \(run.stdout)")
            #expect(run.stdout.contains("4 failed") && run.stdout.contains("2 passed"), "\(run.stdout)")

            // On GitHub Actions: one error for the outage, none per test it hit; the job summary has it.
            let errors = run.stdout.split(separator: "\n").filter { $0.hasPrefix("::error") }
            #expect(
                errors.count == 1 && errors[0].hasPrefix("::error title=infrastructure incident 1::"),
                "\(run.stdout)")
            let summary = directory.read("step-summary.md")
            #expect(summary.contains("### Infrastructure incidents"), "\(summary)")
            cli.environment["GITHUB_ACTIONS"] = nil
            cli.environment["GITHUB_STEP_SUMMARY"] = nil

            let junit = directory.read(".orchestrate/reports/\(runID)/junit.xml")
            #expect(junit.contains(#"failures="0" errors="4""#), "\(junit)")
            #expect(
                junit.contains(#"<error message="infrastructure incident 1: api.test did not answer"#)
                    && junit.contains(#"type="infrastructure""#), "\(junit)")
            let html = directory.read(".orchestrate/reports/\(runID)/report.html")
            #expect(html.contains("Infrastructure incidents") && html.contains("incident 1"), "the report says it")

            let stored = try await queryRows(
                url,
                "SELECT scenario_id, attempt, coalesce(incident, 0) FROM attempts WHERE outcome <> 'passed' ORDER BY 1, 2",
                as: (String, Int32, Int32).self)
            #expect(stored.count == 8 && stored.allSatisfy { $0.2 == 1 }, "\(stored)")
            let days = try await queryRows(
                url, "SELECT scenario_id FROM scenario_days WHERE scenario_id LIKE 'after-%'", as: String.self)
            #expect(days.isEmpty, "the outage's attempts count in no scenario-day: \(days)")
            // Rolled up before the incident was marked (another run's rollup of the same day), then again after: the
            // rows those attempts made go.
            let unmarked = try await queryRows(
                url, "UPDATE attempts SET incident = NULL WHERE run_id = '\(runID)' AND incident = 1 RETURNING id",
                as: Int64.self)
            _ = try await queryRows(url, "SELECT 1 FROM (SELECT orchestrate_roll_up_run('\(runID)')) x", as: Int32.self)
            let early = try await queryRows(
                url, "SELECT count(*) FROM scenario_days WHERE scenario_id LIKE 'after-%'", as: Int64.self)
            let marked = try await queryRows(
                url,
                """
                UPDATE attempts SET incident = 1 WHERE run_id = '\(runID)' AND outcome <> 'passed' RETURNING id
                """, as: Int64.self)
            _ = try await queryRows(url, "SELECT 1 FROM (SELECT orchestrate_roll_up_run('\(runID)')) x", as: Int32.self)
            let late = try await queryRows(
                url, "SELECT count(*) FROM scenario_days WHERE scenario_id LIKE 'after-%'", as: Int64.self)
            #expect(
                unmarked.count == 8 && early == [4] && marked.count == 8 && late == [0],
                "\(unmarked.count) \(early) \(marked.count) \(late)")
            let notes = try await queryRows(
                url, "SELECT DISTINCT note FROM exchanges WHERE note LIKE 'upstream error%'", as: String.self)
            #expect(notes.contains("upstream error: connection refused"), "a refused connection by its name: \(notes)")

            // The backend is back: the four pass, with no flip (the outage's failures do not count), so none of them
            // reaches the quarantine threshold of 0.15 that a fail-then-pass (2/12) would.
            let back = try await Self.run(cli, directory: directory, outage: false)
            #expect(back.exitCode == 0, "\(back.stdout)\(back.stderr)")
            #expect(!back.stdout.contains("incident"), "\(back.stdout)")
            let flaky = try await cli.run(["flaky", "--format", "json"])
            let lines = try #require(
                try JSONSerialization.jsonObject(with: Data(flaky.stdout.utf8)) as? [[String: Any]], "\(flaky.stdout)")
            let after = try #require(lines.first { $0["scenario_id"] as? String == "after-1" }, "\(lines)")
            #expect(after["attempts"] as? Int == 1 && after["flips"] as? Int == 0, "\(after)")
            #expect(
                try await cli.run(["quarantine", "list"]).stdout.contains("no scenario is quarantined"),
                "\(back.stderr)")

            // With a test that fails on its own assertion beside the outage, the run fails (1), and says both.
            let mixed = try await Self.run(
                cli, directory: directory, outage: true,
                extra:
                    #"    - { id: assertion, command: "echo 'expected 3 items, got 2' >&2; exit 1" }"#
            )
            #expect(mixed.exitCode == 1, "\(mixed.stdout)\(mixed.stderr)")
            #expect(mixed.stdout.contains("infrastructure incident 1: api.test"), "\(mixed.stdout)")
            #expect(mixed.stdout.contains("needs a look:\n  assertion"), "\(mixed.stdout)")
            #expect(!mixed.stdout.contains("  after-1  "), "the outage's tests are the incident's: \(mixed.stdout)")
        }
    }
}
