import Foundation
import OrchestrateTesting
import Testing

/// `suite.list`: a suite taken as it is — the real pytest lists its tests, and each one runs as a scenario of its own.
@Suite("suite.list: every test a runner lists is a scenario", .timeLimit(.minutes(5)))
struct SuiteListTests {
    static let pytestSuite = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("ReportsTests/Fixtures/pytest-suite/test_shop.py").path

    static func project(in directory: TemporaryDirectory, list: String) throws {
        try directory.write("shop/tests/test_shop.py", try String(contentsOfFile: pytestSuite, encoding: .utf8))
        try directory.write(
            "shop/orchestrate.yml",
            """
            workers: 2
            suite:
              list: "\(list)"
              command: "python3 -m pytest -q -p no:cacheprovider -o junit_family=xunit2 --junitxml=$ORCHESTRATE_ARTIFACTS_DIR/junit.xml {id}"
              env: { PYTHONDONTWRITEBYTECODE: "1" }
            """)
    }

    @Test("pytest's collected tests run one per scenario: the failure and the error fail, skips and xfails pass")
    func pytest() async throws {
        try await TemporaryDirectory.with { directory in
            try Self.project(
                in: directory, list: "python3 -m pytest --collect-only -q -p no:cacheprovider tests | grep ::")
            let cli = OrchestrateCLI(
                directory: directory.file("shop"), database: try await TestPostgres.shared.makeDatabaseURL())
            let listed = try await cli.run(["scenarios"])
            #expect(listed.exitCode == 0, "\(listed.stderr)")
            for id in [
                "tests/test_shop.py::test_passes", "tests/test_shop.py::TestCheckout::test_in_class",
                "tests/test_shop.py::test_parametrized[2]",
            ] {
                #expect(listed.stdout.contains(id), "\(listed.stdout)")
            }
            let run = try await cli.run(["run", "--retries", "0", "--progress", "none"])
            #expect(run.exitCode == 1, "\(run.stdout)\(run.stderr)")
            #expect(run.stdout.contains("8 scenarios, 6 passed, 2 failed"), "\(run.stdout)")
            #expect(
                run.stdout.contains("tests/test_shop.py::test_fails")
                    && run.stdout.contains("tests/test_shop.py::test_errors_in_setup"))
            // The JUnit XML pytest wrote into the artifacts folder gives the attempt its tests as steps: the failure's
            // file:line and message are in the attempt's log.
            let runID = try #require(run.stdout.split(separator: " ").dropFirst().first.map(String.init))
            let logs = try await cli.run(["logs", runID, "tests/test_shop.py::test_fails"])
            #expect(logs.stdout.contains("failed    tests.test_shop/test_fails"), "\(logs.stdout)")
            #expect(
                logs.stdout.contains("error: tests/test_shop.py:12: AssertionError: the cart total is wrong"),
                "\(logs.stdout)")
            let skipped = try await cli.run(["logs", runID, "tests/test_shop.py::test_skipped"])
            #expect(skipped.stdout.contains("skipped   tests.test_shop/test_skipped"), "\(skipped.stdout)")
        }
    }

    @Test("a list command that fails, or lists nothing, is one error naming orchestrate.yml's line, exit 2")
    func failingList() async throws {
        try await TemporaryDirectory.with { directory in
            try Self.project(
                in: directory, list: "python3 -m pytest --collect-only -q -p no:cacheprovider no-such-folder")
            let cli = OrchestrateCLI(
                directory: directory.file("shop"), database: try await TestPostgres.shared.makeDatabaseURL())
            let failed = try await cli.run(["run", "--progress", "none"])
            #expect(failed.exitCode == 2)
            #expect(
                failed.stderr.contains("orchestrate.yml:3: suite.list (python3 -m pytest")
                    && failed.stderr.contains("exited with status 4"),
                "\(failed.stderr)")
            #expect(failed.stderr.contains("no-such-folder"), "what pytest said is in the error: \(failed.stderr)")

            try Self.project(in: directory, list: "true")
            let empty = try await cli.run(["scenarios"])
            #expect(
                empty.exitCode == 2 && empty.stderr.contains("orchestrate.yml:3: suite.list (true) printed no test id"),
                "\(empty.stderr)")
        }
    }

    @Test(
        "Examples/pytest runs as docs/suites.md says: a genuine failure with its file:line, a flaky test passing on its retry"
    )
    func example() async throws {
        let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
            .appendingPathComponent("Examples/pytest").path
        try await TemporaryDirectory.with { directory in
            try FileManager.default.copyItem(atPath: example, toPath: directory.file("pytest"))
            let cli = OrchestrateCLI(
                directory: directory.file("pytest"), database: try await TestPostgres.shared.makeDatabaseURL())
            let run = try await cli.run(["run", "--progress", "none"])
            #expect(run.exitCode == 1, "\(run.stdout)\(run.stderr)")
            #expect(run.stdout.contains("7 scenarios, 5 passed, 1 flaky, 1 failed"), "\(run.stdout)")
            #expect(
                run.stdout.contains("tests/test_checkout.py::test_payment_gateway_answers  nondeterministic"),
                "\(run.stdout)")
            let runID = try #require(run.stdout.split(separator: " ").dropFirst().first.map(String.init))
            let logs = try await cli.run(["logs", runID, "tests/test_checkout.py::test_discount_rounds_down"])
            #expect(
                logs.stdout.contains(
                    "error: tests/test_checkout.py:22: AssertionError: assert ((45 * 90) // 100) == 41"),
                "\(logs.stdout)")
        }
    }
}
