import Foundation
import OrchestrateTesting
import Testing

/// A suite with no HTTP at all reads as a plain suite: no backends, modes or empty network logs in what orchestrate
/// says of it, each test at its own place in the reports, and tables that fit a terminal.
@Suite("A plain suite reads as one", .timeLimit(.minutes(5)))
struct PlainSuiteTests {
    @Test(
        "no replay or live anywhere, no empty HAR, each test's own file:line in JUnit, never-passed tests timed, tables within 100 columns on a terminal"
    )
    func plain() async throws {
        try await TemporaryDirectory.with { directory in
            let cli = try await BatchTests.project(in: directory, workers: 2, size: 4, retries: 1)
            let run = try await cli.run(["run", "--progress", "lines"])
            #expect(run.exitCode == 1, "\(run.stdout)\(run.stderr)")
            let text = (run.stdout + run.stderr).lowercased()
            #expect(!text.contains("replay") && !text.contains("live"), "\(run.stdout)\(run.stderr)")
            #expect(
                run.stdout.contains("test_flaky  nondeterministic: failed, then passed in this run"), "\(run.stdout)")
            // A test of a batch that failed is at its own place, not its process's exit status.
            let failedLine = try #require(
                run.stderr.split(separator: "\n").first { $0.contains("failed") && $0.contains("test_fails") })
            #expect(failedLine.contains("at tests/test_shop.py:") && !failedLine.contains("exit"), "\(run.stderr)")
            let runID = try #require(run.stdout.split(separator: " ").dropFirst().first.map(String.init))
            let reports = directory.file("shop/.orchestrate/reports/\(runID)")

            // JUnit: each test at its own file (and a failure at its own line), never at orchestrate.yml.
            let junit = directory.read("shop/.orchestrate/reports/\(runID)/junit.xml")
            #expect(!junit.contains("orchestrate.yml"), "\(junit)")
            #expect(junit.contains(#"name="test_pass_1" classname="tests.test_shop" time="#), "\(junit)")
            #expect(junit.contains(#"file="tests/test_shop.py">"#), "a passing test: its file: \(junit)")
            #expect(
                junit.range(
                    of: #"name="test_fails"[^>]*file="tests/test_shop.py" line="[0-9]+""#, options: .regularExpression)
                    != nil, "a failing test: its failure's line: \(junit)")
            #expect(!junit.contains("replay") && !junit.contains(".har"), "\(junit)")

            // Attachments: the failures' timelines, no HAR of no exchanges; the page names no mode.
            let attached = try FileManager.default.subpathsOfDirectory(atPath: "\(reports)/attachments")
            #expect(attached.contains { $0.hasSuffix(".timeline.txt") } && !attached.contains { $0.hasSuffix(".har") })
            let page = directory.read("shop/.orchestrate/reports/\(runID)/report.html")
            #expect(!page.contains("· mode ") && !page.contains("orchestrate.yml:"), "the page's header and places")

            // flaky and history: no backends to tell apart.
            let flaky = try await cli.run(["flaky"])
            #expect(flaky.stdout.contains("PASSED") && !flaky.stdout.contains("REPLAY"), "\(flaky.stdout)")
            let history = try await cli.run(["history", "test_fails"])
            #expect(!history.stdout.contains("MODE") && !history.stdout.contains("EXCHANGES"), "\(history.stdout)")

            // A test that never passed is timed by its last attempt, not new; names equal to ids are not repeated.
            let scenarios = try await cli.run(["scenarios"])
            let failing = try #require(scenarios.stdout.split(separator: "\n").first { $0.contains("test_fails") })
            #expect(failing.contains("s, never passed") && !failing.contains("new"), "\(scenarios.stdout)")
            #expect(!scenarios.stdout.contains("NAME"), "\(scenarios.stdout)")

            // On a terminal 100 columns wide, the listings fit it.
            for command in ["runs", "flaky", "scenarios", "history test_fails"] {
                let shown = try await Self.onTerminal(command, columns: 100, cli: cli, directory: directory)
                let lines = shown.split(separator: "\n")
                #expect(!lines.isEmpty && lines.allSatisfy { $0.count <= 100 }, "\(command):\n\(shown)")
            }
        }
    }

    /// What `orchestrate COMMAND` prints on a terminal `columns` wide (a pseudo-terminal of `script`, which says its
    /// width in COLUMNS), its carriage returns taken out.
    static func onTerminal(
        _ command: String, columns: Int, cli: OrchestrateCLI, directory: TemporaryDirectory
    ) async throws -> String {
        var terminal = cli
        terminal.environment["COLUMNS"] = "\(columns)"
        let result = try await terminal.run(
            ["-qec", "\(OrchestrateCLI.executable) \(command)", "/dev/null"], name: "terminal",
            executable: "/usr/bin/script")
        #expect(result.exitCode == 0, "\(command): \(result.stdout)\(result.stderr)")
        return result.stdout.replacingOccurrences(of: "\r", with: "")
    }
}
