import Foundation
import OrchestrateTesting
import Testing

/// A test's name is data, never code, and never a control sequence on someone's terminal. docs/reliability.md names
/// these tests.
@Suite("A test's name is data: never run, never printed raw", .timeLimit(.minutes(3)))
struct NamesAreDataTests {
    @Test(
        "ids and scenario names made of placeholders and shell code reach the command as they are, and nothing else runs"
    )
    func injection() async throws {
        try await TemporaryDirectory.with { directory in
            let hostile = [
                "{name}; touch pwned #", "x'{id}'; touch pwned #", "$(touch pwned)", "a\"{ids-comma}\"; touch pwned #",
            ]
            try directory.write("suite/ids", hostile.joined(separator: "\n") + "\n")
            // One at a time ({id}, {name}), and in a batch ({ids-comma}, {ids}): each command writes what it got.
            try directory.write(
                "suite/report.py",
                """
                import os, sys
                open(os.path.join(os.environ["ORCHESTRATE_ARTIFACTS_DIR"], "got"), "w").write("\\0".join(sys.argv[1:]))
                ids = sys.argv[2].split(",") if sys.argv[1] == "comma" else sys.argv[2:]
                cases = "".join('<testcase name="%s"/>' % i.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;") for i in ids)
                open(os.path.join(os.environ["ORCHESTRATE_ARTIFACTS_DIR"], "junit.xml"), "w").write("<testsuite>%s</testsuite>" % cases)
                """)
            for command in [
                #"printf '%s\000' {id} {name} > "$ORCHESTRATE_ARTIFACTS_DIR/got"; exit 1"#,
                "python3 report.py comma {ids-comma}", "python3 report.py words {ids}",
            ] {
                try directory.write(
                    "suite/orchestrate.yml",
                    """
                    workers: 1
                    retries: 0
                    suite:
                      list: "cat ids"
                      command: '\(command.replacingOccurrences(of: "'", with: "''"))'
                    \(command.hasPrefix("python3") ? "  results: junit\n  batch: { size: 10 }" : "")
                    """)
                let cli = OrchestrateCLI(
                    directory: directory.file("suite"), database: try await TestPostgres.shared.makeDatabaseURL())
                let run = try await cli.run(["run", "--progress", "none"])
                #expect(
                    !FileManager.default.fileExists(atPath: directory.file("suite/pwned")),
                    "\(command): an id ran as code")
                let runID = try #require(
                    run.stdout.split(separator: " ").dropFirst().first.map(String.init), "\(run.stdout)\(run.stderr)")
                if command.hasPrefix("printf") {
                    // Each command failed (so that it kept what it got): it got its id twice, byte for byte.
                    for id in hostile {
                        let artifacts = try await cli.run(["artifacts", runID, id, "--out", directory.file("out")])
                        #expect(artifacts.exitCode == 0, "\(artifacts.stderr)")
                        #expect(directory.read("out/attempt-1/got") == "\(id)\0\(id)\0", "\(id)")
                        try? FileManager.default.removeItem(atPath: directory.file("out"))
                    }
                } else {
                    // The batch's runner got the ids as they are and named each, so each passed.
                    #expect(
                        run.exitCode == 0 && run.stdout.contains("4 scenarios, 4 passed, 0 failed"),
                        "\(command): \(run.stdout)\(run.stderr)")
                }
            }
            // A Gherkin scenario named like a placeholder and shell code.
            try directory.write(
                "gherkin/features/a.feature",
                "Feature: F\n  Scenario: harmless {name}; touch pwned #\n    Given a step\n")
            try directory.write(
                "gherkin/orchestrate.yml",
                "suite:\n  gherkin: [\"features/*.feature\"]\n  command: \"echo {name} {id}\"\n")
            let cli = OrchestrateCLI(
                directory: directory.file("gherkin"), database: try await TestPostgres.shared.makeDatabaseURL())
            let run = try await cli.run(["run", "--progress", "none"])
            #expect(run.exitCode == 0, "\(run.stdout)\(run.stderr)")
            #expect(
                !FileManager.default.fileExists(atPath: directory.file("gherkin/pwned")),
                "a scenario's name ran as code")
        }
    }

    @Test(
        "a listed id with a control character is one error naming orchestrate.yml's line, exit 2, printed escaped",
        arguments: [
            ("nul\\000byte", "U+0000"), ("esc\\033]0;pwned\\007", "U+001B"), ("cr\\rpart2", "U+000D"),
            ("bidi\\342\\200\\256x", "U+202E"),
        ])
    func controlCharacters(id: String, named: String) async throws {
        try await TemporaryDirectory.with { directory in
            try directory.write(
                "suite/orchestrate.yml",
                """
                suite:
                  list: 'printf "fine\\n\(id)\\n"'
                  command: "echo {id}"
                """)
            let cli = OrchestrateCLI(
                directory: directory.file("suite"), database: try await TestPostgres.shared.makeDatabaseURL())
            for command in [["scenarios"], ["run", "--progress", "none"]] {
                let result = try await cli.run(command)
                #expect(result.exitCode == 2, "\(command): \(result.stdout)\(result.stderr)")
                #expect(result.stderr.contains("orchestrate.yml:2: suite.list (printf"), "\(result.stderr)")
                #expect(
                    result.stderr.contains("on its line 2, a test id with a control character (\(named))"),
                    "\(result.stderr)")
                #expect(result.stderr.split(separator: "\n").count == 1, "one line: \(result.stderr)")
                let raw = (result.stdout + result.stderr).unicodeScalars.filter {
                    $0.value < 0x20 && $0 != "\n" || $0.value == 0x202E
                }
                #expect(raw.isEmpty, "printed raw: \(raw.map(\.value))")
            }
        }
    }

    @Test(
        "a feature file's scenario whose name holds a control character is one error naming the file and line, exit 2")
    func gherkinControl() async throws {
        try await TemporaryDirectory.with { directory in
            try directory.write(
                "suite/features/a.feature",
                "Feature: F\n  Scenario: fine\n    Given x\n\n  Scenario: ring \u{7}bell\n    Given x\n")
            try directory.write(
                "suite/orchestrate.yml", "suite:\n  gherkin: [\"features/*.feature\"]\n  command: \"true\"\n")
            let cli = OrchestrateCLI(
                directory: directory.file("suite"), database: try await TestPostgres.shared.makeDatabaseURL())
            let result = try await cli.run(["scenarios"])
            #expect(result.exitCode == 2, "\(result.stdout)\(result.stderr)")
            #expect(result.stderr.contains("features/a.feature:5: this scenario's name"), "\(result.stderr)")
            #expect(
                result.stderr.contains("(U+0007)") && result.stderr.contains("ring \\u0007bell"), "\(result.stderr)")
            #expect(!result.stderr.unicodeScalars.contains("\u{7}"), "printed raw")
        }
    }

    @Test(
        "what the console prints from outside is escaped: a runner's failure message in the run's summary and in orchestrate logs"
    )
    func escapedOutput() async throws {
        try await TemporaryDirectory.with { directory in
            // A Cucumber JSON report whose failure message retitles the terminal, clears it and hides a line.
            try directory.write(
                "suite/report.py",
                #"""
                import json, os
                message = "boom \u001b]0;retitled\u0007 \u001b[2J cleared\rhidden"
                json.dump([{"uri": "", "elements": [{"type": "scenario", "name": "loud", "steps": [
                    {"keyword": "Given ", "name": "x", "result": {"status": "failed", "error_message": message}}]}]}],
                    open(os.path.join(os.environ["ORCHESTRATE_ARTIFACTS_DIR"], "cucumber.json"), "w"))
                """#)
            try directory.write(
                "suite/orchestrate.yml",
                "suite:\n  list: \"echo loud\"\n  command: \"python3 report.py {id}\"\n  results: cucumber-json\n")
            let cli = OrchestrateCLI(
                directory: directory.file("suite"), database: try await TestPostgres.shared.makeDatabaseURL())
            let run = try await cli.run(["run", "--progress", "lines"])
            #expect(run.exitCode == 1, "\(run.stdout)\(run.stderr)")
            #expect(run.stdout.contains(#"boom \u001B]0;retitled\u0007 \u001B[2J cleared\rhidden"#), "\(run.stdout)")
            let runID = try #require(run.stdout.split(separator: " ").dropFirst().first.map(String.init))
            let logs = try await cli.run(["logs", runID, "loud"])
            #expect(logs.stdout.contains(#"boom \u001B]0;retitled\u0007 \u001B[2J cleared\rhidden"#), "\(logs.stdout)")
            for printed in [run.stdout, run.stderr, logs.stdout, logs.stderr] {
                #expect(
                    !printed.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" && $0 != "\t" },
                    "printed raw: \(printed)")
            }
        }
    }
}
