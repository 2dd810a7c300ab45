import Foundation
import OrchestrateTesting
import Testing

/// `orchestrate init` on real suites: it writes their config, and the config runs them.
@Suite("orchestrate init", .timeLimit(.minutes(5)))
struct InitTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    @Test("a pytest project: its config written, .orchestrate/ ignored, its tests listed, then run; never overwritten")
    func pytestProject() async throws {
        try await TemporaryDirectory.with { directory in
            try directory.write("pyproject.toml", "[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n")
            try directory.write(
                "tests/test_cart.py",
                "def test_add():\n    assert 1 + 1 == 2\n\ndef test_total():\n    assert sum([1, 2]) == 3\n")
            try directory.write(".gitignore", "dist/")  // no newline at its end
            let cli = OrchestrateCLI(
                directory: directory.path, database: try await TestPostgres.shared.makeDatabaseURL())
            let first = try await cli.run(["init"])
            #expect(first.exitCode == 0, "\(first.stderr)")
            #expect(
                first.stdout.contains("wrote orchestrate.yml: a pytest suite (found pyproject.toml"), "\(first.stdout)")
            #expect(first.stdout.contains("tests/test_cart.py::test_add") && first.stdout.contains("test_total"))
            #expect(first.stdout.hasSuffix("next: orchestrate run\n"), "\(first.stdout)")
            let ignore = try String(contentsOfFile: directory.file(".gitignore"), encoding: .utf8)
            #expect(ignore.hasPrefix("dist/\n") && ignore.hasSuffix("\n.orchestrate/\n"), "\(ignore)")
            let written = try String(contentsOfFile: directory.file("orchestrate.yml"), encoding: .utf8)
            let run = try await cli.run(["run", "--progress", "none"])
            #expect(run.exitCode == 0, "\(run.stderr)")
            #expect(run.stdout.contains("2 scenarios, 2 passed"), "\(run.stdout)")
            let again = try await cli.run(["init"])
            #expect(again.exitCode == 2 && again.stderr.contains("never overwrites"), "\(again.stderr)")
            #expect(try String(contentsOfFile: directory.file("orchestrate.yml"), encoding: .utf8) == written)
            #expect(try String(contentsOfFile: directory.file(".gitignore"), encoding: .utf8) == ignore, "added once")
        }
    }

    @Test("a Swift package: its XCTest and Swift Testing tests listed from the built test binary")
    func swiftPackage() async throws {
        try await TemporaryDirectory.with { directory in
            for item in ["Package.swift", "Sources", "Tests"] {
                try FileManager.default.copyItem(
                    atPath: Self.fixtures.appendingPathComponent("swiftpm-suite/\(item)").path,
                    toPath: directory.file(item))
            }
            let result = try await OrchestrateCLI(directory: directory.path, database: nil).run(["init"])
            #expect(result.exitCode == 0, "\(result.stderr)")
            #expect(result.stdout.contains("a swiftpm suite (found Package.swift)"), "\(result.stdout)")
            #expect(
                result.stdout.contains("ShopTests.CartTests/testAdd")
                    && result.stdout.contains("ShopTests.PriceTests/total()"), "\(result.stdout)")
            #expect(!FileManager.default.fileExists(atPath: directory.file(".orchestrate/postgres")), "no database yet")
        }
    }

    @Test("a Gherkin folder with behave steps: every scenario and example row runs alone in behave")
    func gherkinFolder() async throws {
        try await TemporaryDirectory.with { directory in
            try directory.write(
                "features/cart.feature",
                """
                Feature: Cart
                  Scenario: adds an item
                    Given an empty cart
                    When I add 2 apples
                    Then the cart holds 2 items

                  Scenario Outline: adds several
                    Given an empty cart
                    When I add <n> apples
                    Then the cart holds <n> items

                    Examples:
                      | n |
                      | 1 |
                      | 3 |
                """)
            try directory.write(
                "features/steps/cart.py",
                """
                from behave import given, when, then

                @given("an empty cart")
                def empty(context):
                    context.items = 0

                @when("I add {n:d} apples")
                def add(context, n):
                    context.items += n

                @then("the cart holds {n:d} items")
                def holds(context, n):
                    assert context.items == n and n != 3, "three is refused"
                """)
            let cli = OrchestrateCLI(
                directory: directory.path, database: try await TestPostgres.shared.makeDatabaseURL())
            let initialized = try await cli.run(["init"])
            #expect(initialized.exitCode == 0, "\(initialized.stderr)")
            #expect(initialized.stdout.contains("features/cart.feature: adds several [n=3]"), "\(initialized.stdout)")
            let run = try await cli.run(["run", "--progress", "none", "--retries", "0"])
            #expect(run.exitCode == 1, "\(run.stderr)")
            #expect(run.stdout.contains("3 scenarios, 2 passed, 1 failed"), "\(run.stdout)")
            #expect(run.stdout.contains("adds several [n=3]"), "the failing row is named: \(run.stdout)")
        }
    }

    /// Runs `orchestrate init` in a folder on a pseudo-terminal, answers its question with `answer` once it asks, and
    /// prints its exit status and what it showed, as JSON.
    static let terminal = """
        import json, os, pty, select, sys, time
        pid, fd = pty.fork()
        if pid == 0:
            os.chdir(sys.argv[2])
            os.execv(sys.argv[1], [sys.argv[1], "init"])
        output, answered, deadline = b"", False, time.time() + 120
        while time.time() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.5)
            if fd not in ready:
                continue
            try:
                data = os.read(fd, 4096)
            except OSError:
                break
            if not data:
                break
            output += data
            if not answered and b"[1]" in output:
                os.write(fd, sys.argv[3].encode() + b"\\n")
                answered = True
        _, status = os.waitpid(pid, 0)
        print(json.dumps({"status": os.waitstatus_to_exitcode(status), "output": output.decode(errors="replace")}))
        """

    @Test("several suites on a terminal: init asks which one, and writes the one answered")
    func asks() async throws {
        try await TemporaryDirectory.with { directory in
            try directory.write("conftest.py", "")
            try directory.write("features/a.feature", "Feature: a\n  Scenario: s\n    Given x\n")
            try directory.write("features/steps/a.py", "from behave import given\n@given('x')\ndef x(context): pass\n")
            let line = try #require(
                try await Python.lines(
                    script: Self.terminal, arguments: [OrchestrateCLI.executable, directory.path, "2"],
                    hint: "python3's pty module"
                ).last)
            let result = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let output = (result["output"] as? String ?? "").replacingOccurrences(of: "\r", with: "")
            #expect(result["status"] as? Int == 0, "\(output)")
            #expect(output.contains("1) pytest (conftest.py)") && output.contains("2) gherkin (features/a.feature)"))
            #expect(output.contains("wrote orchestrate.yml: a gherkin suite"), "\(output)")
            #expect(directory.read("orchestrate.yml").contains(#"gherkin: ["features/**/*.feature"]"#))
        }
    }

    @Test("several suites: the first is written and the others named; --suite writes another; none is an error")
    func severalAndNone() async throws {
        try await TemporaryDirectory.with { directory in
            let cli = OrchestrateCLI(directory: directory.path, database: nil)
            let none = try await cli.run(["init"])
            #expect(none.exitCode == 2 && none.stderr.contains("found no suite"), "\(none.stderr)")
            #expect(!FileManager.default.fileExists(atPath: directory.file("orchestrate.yml")))
            try directory.write("conftest.py", "")
            try directory.write("tests/test_a.py", "def test_a():\n    pass\n")
            try directory.write("features/a.feature", "Feature: a\n  Scenario: s\n    Given x\n")
            try directory.write("features/steps/a.py", "from behave import given\n@given('x')\ndef x(context): pass\n")
            let first = try await cli.run(["init"])
            #expect(first.exitCode == 0, "\(first.stderr)")
            #expect(
                first.stdout.contains("found several suites (pytest: conftest.py, gherkin: features/a.feature)"),
                "\(first.stdout)")
            #expect(first.stdout.contains("a pytest suite"))
            let other = try await cli.run(["init", "--suite", "gherkin", "--config", "features.yml"])
            #expect(other.exitCode == 0, "\(other.stderr)")
            #expect(other.stdout.contains("wrote features.yml: a gherkin suite"), "\(other.stdout)")
            #expect(!other.stdout.contains("added .orchestrate/"), "already ignored: \(other.stdout)")
            let missing = try await cli.run(["init", "--suite", "jest", "--config", "jest.yml"])
            #expect(missing.exitCode == 2 && missing.stderr.contains("--suite jest: none here"), "\(missing.stderr)")
        }
    }
}
