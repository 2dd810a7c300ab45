import Foundation
import OrchestrateTesting
import Testing

/// `run --detect-new-flakes`: a test never run before runs extra times once it passed, and one failure among them makes
/// it nondeterministic.
@Suite("New tests run again to catch flakiness early", .timeLimit(.minutes(3)))
struct NewFlakesTests {
    static func project(in directory: TemporaryDirectory, stable: String = "true") async throws -> OrchestrateCLI {
        try directory.write(
            "shop/orchestrate.yml",
            """
            workers: 2
            suite:
              scenarios:
                - { id: stable, command: "\(stable)" }
                # Fails on its third run only.
                - { id: sometimes, command: "n=$(cat count 2>/dev/null || echo 0); n=$((n + 1)); echo $n > count; test $n -ne 3" }
            """)
        return OrchestrateCLI(
            directory: directory.file("shop"), database: try await TestPostgres.shared.makeDatabaseURL())
    }

    /// Finished attempts per test in the newest run.
    static func attempts(_ cli: OrchestrateCLI) async throws -> [String: Int] {
        let rows = try await queryRows(
            cli.environment["ORCHESTRATE_DATABASE_URL"]!,
            """
            SELECT scenario_id, count(*) FROM attempts
            WHERE run_id = (SELECT id FROM runs ORDER BY created_at DESC LIMIT 1) AND state = 'finished' GROUP BY 1
            """, as: (String, Int64).self)
        return Dictionary(uniqueKeysWithValues: rows.map { ($0.0, Int($0.1)) })
    }

    @Test("new tests under 5 s run 10 times in all; one failure among them is nondeterministic; seen tests run once")
    func detects() async throws {
        try await TemporaryDirectory.with { directory in
            let cli = try await Self.project(in: directory)
            // All of the suite is new: above a share of 40% nothing runs again.
            let capped = try await cli.run([
                "run", "--progress", "none", "--detect-new-flakes", "--new-tests-share", "0.4",
            ])
            #expect(capped.exitCode == 0, "\(capped.stdout)\(capped.stderr)")
            #expect(
                capped.stderr.contains(
                    "new tests: 2 of 2, more than 40% of the suite (--new-tests-share): not run again"),
                "\(capped.stderr)")
            #expect(try await Self.attempts(cli) == ["stable": 1, "sometimes": 1])

            try directory.write("shop/count", "0")
            try directory.write(
                "shop/orchestrate.yml",
                try String(contentsOfFile: directory.file("shop/orchestrate.yml"), encoding: .utf8)
                    .replacingOccurrences(of: "command: \"true\"", with: "command: \"true # changed\""))
            let run = try await cli.run(["run", "--progress", "none", "--detect-new-flakes", "--new-tests-share", "1"])
            // The changed test is new again; `sometimes` was seen with this command in the first run.
            #expect(run.stderr.contains("new tests: 1 of 2; 9 extra runs of those that passed"), "\(run.stderr)")
            #expect(try await Self.attempts(cli) == ["stable": 10, "sometimes": 1])

            // A fresh project: both new, both run 10 times; the third run of `sometimes` fails.
            let fresh = try await Self.project(in: directory)
            try directory.write("shop/count", "0")
            var cli2 = fresh
            cli2.environment["ORCHESTRATE_DATABASE_URL"] = try await TestPostgres.shared.makeDatabaseURL()
            let detected = try await cli2.run([
                "run", "--progress", "none", "--detect-new-flakes", "--new-tests-share", "1",
            ])
            #expect(
                detected.exitCode == 0,
                "a nondeterministic test fails the run only with --strict: \(detected.stdout)\(detected.stderr)")
            #expect(
                detected.stderr.contains("new tests: 2 of 2; 18 extra runs of those that passed"), "\(detected.stderr)")
            #expect(detected.stdout.contains("sometimes  nondeterministic"), "\(detected.stdout)")
            #expect(try await Self.attempts(cli2) == ["stable": 10, "sometimes": 10])
            let strict = try await cli2.run(["run", "--progress", "none", "--detect-new-flakes", "--strict"])
            #expect(strict.stderr.contains("new tests: 0 of 2; 0 extra runs"), "seen tests run once: \(strict.stderr)")
        }
    }
}
