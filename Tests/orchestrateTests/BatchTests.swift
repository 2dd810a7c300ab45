import Foundation
import OrchestrateTesting
import Testing

/// Batches: a runner's tests several to a process (`{ids}`), each with its own result, retry and history.
@Suite("Batches: several tests to a process, each with its own result", .timeLimit(.minutes(5)))
struct BatchTests {
    /// A pytest suite of passing tests, one that always fails, one that fails on its first attempt, and `extra`;
    /// `auto: false` fills every batch up to `size`; `conftest`: what pytest imports first in each process.
    static func project(
        in directory: TemporaryDirectory, workers: Int, size: Int, retries: Int, extra: String = "", auto: Bool = true,
        conftest: String? = nil
    ) async throws
        -> OrchestrateCLI
    {
        var tests = (1...6).map { "def test_pass_\($0)():\n    assert True\n" }.joined(separator: "\n")
        tests += """

            def test_fails():
                assert 2 + 2 == 5, "two and two"

            def test_flaky():
                assert os.environ["ORCHESTRATE_ATTEMPT"] != "1", "the first attempt fails"

            \(extra)
            """
        try directory.write("shop/tests/test_shop.py", "import os\nimport signal\n\n" + tests)
        if let conftest { try directory.write("shop/tests/conftest.py", conftest) }
        try directory.write(
            "shop/orchestrate.yml",
            """
            workers: \(workers)
            retries: \(retries)
            suite:
              list: "python3 -m pytest --collect-only -q -p no:cacheprovider tests | grep ::"
              command: "python3 -m pytest -q -p no:cacheprovider -o junit_family=xunit2 --junitxml=$ORCHESTRATE_ARTIFACTS_DIR/junit.xml {ids}"
              results: junit
              batch: { size: \(size)\(auto ? "" : ", auto: false") }
              env: { PYTHONDONTWRITEBYTECODE: "1" }
            """)
        return OrchestrateCLI(
            directory: directory.file("shop"), database: try await TestPostgres.shared.makeDatabaseURL())
    }

    /// Each finished attempt of the newest run: test, attempt number, process id, worker slot, outcome.
    static func attempts(
        _ cli: OrchestrateCLI
    ) async throws -> [(test: String, attempt: Int32, pid: Int32, worker: String, outcome: String)] {
        try await queryRows(
            cli.environment["ORCHESTRATE_DATABASE_URL"]!,
            """
            SELECT scenario_id, attempt, pid, worker, outcome FROM attempts
            WHERE run_id = (SELECT id FROM runs ORDER BY created_at DESC LIMIT 1) AND state = 'finished' ORDER BY id
            """, as: (String, Int32, Int32, String, String).self
        ).map { (test: $0.0, attempt: $0.1, pid: $0.2, worker: $0.3, outcome: $0.4) }
    }

    @Test(
        "8 pytest tests run in batches of up to 4: fewer processes than tests, a result per test, the failures retried alone"
    )
    func batches() async throws {
        try await TemporaryDirectory.with { directory in
            let cli = try await Self.project(in: directory, workers: 2, size: 4, retries: 1)
            let run = try await cli.run(["run", "--progress", "none"])
            #expect(run.exitCode == 1, "\(run.stdout)\(run.stderr)")
            #expect(run.stdout.contains("8 scenarios, 6 passed, 1 flaky, 1 failed"), "\(run.stdout)")
            let attempts = try await Self.attempts(cli)
            let first = attempts.filter { $0.attempt == 1 }
            #expect(first.count == 8)
            #expect(Set(first.map(\.pid)).count < 8, "tests shared processes: \(first)")
            #expect(
                Dictionary(grouping: first, by: \.pid).values.allSatisfy { $0.count <= 4 },
                "no batch holds more than 4: \(first)")
            // A failed test runs again alone (its own process), kept off the slot it failed on while another can take
            // it.
            let avoided = try await queryRows(
                cli.environment["ORCHESTRATE_DATABASE_URL"]!,
                """
                SELECT r.scenario_id FROM attempts r JOIN attempts o ON o.run_id = r.run_id AND o.scenario_id = r.scenario_id
                WHERE r.attempt = 2 AND o.attempt = 1 AND o.state = 'finished' AND r.avoid_worker = o.worker ORDER BY 1
                """, as: String.self)
            #expect(avoided == ["tests/test_shop.py::test_fails", "tests/test_shop.py::test_flaky"])
            for test in avoided {
                let retry = try #require(attempts.first { $0.test == test && $0.attempt == 2 })
                #expect(attempts.filter { $0.pid == retry.pid }.count == 1, "\(test)'s retry ran alone")
            }
            // Each test's own failure is what its attempt says, with the runner's file:line.
            let runID = try #require(run.stdout.split(separator: " ").dropFirst().first.map(String.init))
            let logs = try await cli.run(["logs", runID, "tests/test_shop.py::test_fails"])
            #expect(logs.stdout.contains("failed    tests/test_shop.py::test_fails"), "\(logs.stdout)")
            #expect(
                logs.stdout.contains("tests/test_shop.py:") && logs.stdout.contains("two and two"), "\(logs.stdout)")
            let passing = try await cli.run(["logs", runID, "tests/test_shop.py::test_pass_3"])
            #expect(passing.stdout.contains("passed    tests/test_shop.py::test_pass_3"), "\(passing.stdout)")
            // The JUnit report names each test as pytest does.
            let junit = try String(
                contentsOfFile: directory.file("shop/.orchestrate/reports/\(runID)/junit.xml"), encoding: .utf8)
            #expect(junit.contains(#"name="test_fails" classname="tests.test_shop""#), "\(junit)")
        }
    }

    @Test(
        "batch: auto sizes from the runner's start-up: the listing's time without history, then each process's own"
    )
    func learnsStartup() async throws {
        try await TemporaryDirectory.with { directory in
            // Each pytest process imports a conftest that takes half a second: a start-up dearer than all the tests.
            let cli = try await Self.project(
                in: directory, workers: 4, size: 100, retries: 1, conftest: "import time\ntime.sleep(0.5)\n")
            var processes: [Int] = []
            var said: [String] = []
            for _ in 1...2 {
                let run = try await cli.run(["run", "--progress", "none", "--verbose"])
                #expect(run.exitCode == 1, "\(run.stdout)\(run.stderr)")
                #expect(run.stdout.contains("8 scenarios, 6 passed, 1 flaky, 1 failed"), "\(run.stdout)")
                let first = try await Self.attempts(cli).filter { $0.attempt == 1 }
                #expect(first.count == 8)
                processes.append(Set(first.map(\.pid)).count)
                said.append(
                    run.stderr.split(separator: "\n").first { $0.contains("batches sized") }.map(String.init) ?? "")
            }
            // Without history the listing's time (pytest importing the conftest) stands for the start-up; then the
            // start-up measured in each process (its first attempt carries it). Either way fewer processes than the
            // slots' three each, which every test alone would have been.
            #expect(said[0].contains("no history: the listing's time as start-up"), "\(said)")
            #expect(!said[1].contains("no history") && said[1].contains("start-up"), "\(said)")
            #expect(processes.allSatisfy { $0 <= 4 }, "\(processes)")
            let learned = try await queryRows(
                cli.environment["ORCHESTRATE_DATABASE_URL"]!,
                "SELECT count(*) FROM attempts WHERE startup_ms >= 400", as: Int64.self)
            #expect((learned.first ?? 0) >= 8, "every process's start-up was measured: \(learned)")
        }
    }

    @Test(
        "a batch whose process dies: the tests it did not report run again alone, not failed; the one that kills it fails"
    )
    func crash() async throws {
        try await TemporaryDirectory.with { directory in
            let crasher = """
                def test_kills_its_process():
                    os.kill(os.getpid(), signal.SIGKILL)
                """
            // One slot and batches as large as the suite: every test starts in the process the crasher takes down.
            let cli = try await Self.project(
                in: directory, workers: 1, size: 20, retries: 0, extra: crasher, auto: false)
            let run = try await cli.run(["run", "--progress", "none"])
            #expect(run.exitCode == 1, "\(run.stdout)\(run.stderr)")
            #expect(run.stdout.contains("9 scenarios, 6 passed, 3 failed"), "\(run.stdout)")
            let attempts = try await Self.attempts(cli)
            #expect(attempts.count == 9, "one finished attempt per test, no retry spent: \(attempts)")
            #expect(Set(attempts.map(\.pid)).count == 9, "after the crash each test ran alone: \(attempts)")
            // pytest under `sh -c` ends with the shell's 137 for the SIGKILL.
            #expect(attempts.first { $0.test.hasSuffix("test_kills_its_process") }?.outcome == "failed")
            let killed = try await cli.run([
                "logs", try #require(run.stdout.split(separator: " ").dropFirst().first.map(String.init)), "test_kills",
            ])
            #expect(killed.stdout.contains("exited with status 137"), "\(killed.stdout)")
            let abandoned = try await queryRows(
                cli.environment["ORCHESTRATE_DATABASE_URL"]!, "SELECT count(*) FROM attempts WHERE state = 'abandoned'",
                as: Int64.self)
            #expect(abandoned.first == 9, "the crashed batch's 9 tests went back to the queue")
        }
    }

    @Test("a command that takes {ids} needs suite.list and suite.results: one error naming orchestrate.yml, exit 2")
    func configuration() async throws {
        try await TemporaryDirectory.with { directory in
            let cli = try await Self.project(in: directory, workers: 1, size: 2, retries: 0)
            let text = try String(contentsOfFile: directory.file("shop/orchestrate.yml"), encoding: .utf8)
            try directory.write("shop/orchestrate.yml", text.replacingOccurrences(of: "  results: junit\n", with: ""))
            let missing = try await cli.run(["scenarios"])
            #expect(missing.exitCode == 2)
            #expect(
                missing.stderr.contains("orchestrate.yml:4") && missing.stderr.contains("set suite.results"),
                "\(missing.stderr)")
            try directory.write(
                "shop/orchestrate.yml", text.replacingOccurrences(of: "results: junit", with: "results: xunit"))
            let wrong = try await cli.run(["scenarios"])
            #expect(
                wrong.exitCode == 2
                    && wrong.stderr.contains("suite.results must be one of junit, cucumber-json, cucumber-messages"))
        }
    }
}
