import Foundation
import OrchestrateTesting
import Testing

/// `run --changed-since` on a git repository the test makes: pytest tests, one of which calls a backend through its
/// mock server; footprints recorded by a run at a clean revision; selections by changed test file, changed handler,
/// a file no footprint tracks, new and recently failed tests; the left-out tests in the summary and the JUnit; a
/// sample's failure counted as a miss. Its first test makes fifteen runs one after the other, each running pytest under
/// coverage.py: beside the whole suite and `stress-ng --cpu 2` on two cores that took up to six and a half minutes, so
/// the limit that guards against a hang is eight, under the test watchdog's ten (`make test`).
@Suite("run --changed-since on a git repository", .timeLimit(.minutes(8)))
struct SelectionTests {
    static func project(_ directory: TemporaryDirectory, upstream: TestUpstream) throws {
        try directory.write(
            "orchestrate.yml",
            """
            workers: 2
            quarantine: { threshold: off }
            suite:
              list: "python3 -m pytest --collect-only -q -p no:cacheprovider tests | grep ::"
              command: "python3 -m pytest -q -p no:cacheprovider -o junit_family=xunit2 --junitxml=$ORCHESTRATE_ARTIFACTS_DIR/junit.xml {id}"
              env: { PYTHONDONTWRITEBYTECODE: "1" }
            mock:
              mode: live
              hosts: { api.shop.test: "\(upstream.url)" }
            selection:
              ignore: ["*.md"]
              endpoints:
                - files: ["server/carts/**"]
                  endpoints: ["GET api.shop.test/v1/carts/*"]
            """)
        try directory.write(
            "tests/test_cart.py",
            """
            import json, os, urllib.request

            def test_show_cart():
                with urllib.request.urlopen(os.environ["ORCHESTRATE_MOCK_URL"] + "/api.shop.test/v1/carts/42") as answer:
                    assert json.load(answer)["path"] == "/v1/carts/42"

            def test_empty_cart():
                assert [] == []

            """)
        try directory.write(
            "tests/test_pay.py",
            """
            def test_pay():
                assert 2 + 2 == 4

            """)
        try directory.write("server/carts/show.py", "def show(cart): return cart\n")
        try directory.write(".gitignore", ".orchestrate/\n__pycache__/\n*.stdout\n*.stderr\n*.xml\n")
    }

    /// The CLI in `directory`, made a git repository with everything in it committed.
    static func committed(_ directory: TemporaryDirectory) async throws -> OrchestrateCLI {
        let cli = OrchestrateCLI(directory: directory.path, database: try await TestPostgres.shared.makeDatabaseURL())
        for arguments in [["init", "-q"], ["add", "-A"], ["commit", "-qm", "first"]] {
            try await git(arguments, cli: cli)
        }
        return cli
    }

    /// git in the test's repository, as someone who commits there.
    static func git(_ arguments: [String], cli: OrchestrateCLI) async throws {
        let result = try await cli.run(
            ["-c", "user.email=t@example.test", "-c", "user.name=t"] + arguments, name: "git",
            executable: "/usr/bin/git")
        #expect(result.exitCode == 0, "git \(arguments): \(result.stderr)")
    }

    @Test(
        "a run at a clean revision records footprints; --changed-since runs what the change can break and says what it left out"
    )
    func changedSince() async throws {
        try await TestUpstream.with { upstream in
            try await TemporaryDirectory.with { directory in
                try Self.project(directory, upstream: upstream)
                let cli = try await Self.committed(directory)
                func git(_ arguments: String...) async throws { try await Self.git(arguments, cli: cli) }
                func run(_ arguments: String...) async throws -> OrchestrateCLI.Result {
                    try await cli.run(["run", "--progress", "none"] + arguments)
                }

                let none = try await run("--changed-since", "HEAD")
                #expect(none.exitCode == 0, "\(none.stdout)\(none.stderr)")
                #expect(
                    none.stderr.contains("every test runs — no footprint at a revision"),
                    "no footprints yet: everything runs, saying why: \(none.stderr)")
                #expect(none.stdout.contains("3 scenarios, 3 passed"), "\(none.stdout)")

                // A test file changed in a commit: its tests run, the others are left out. (From now on the test reads a
                // file the selection is told to ignore: a change to it will be a miss.)
                try directory.write(
                    "tests/test_pay.py", "def test_pay():\n    assert open('NOTES.md').read().startswith('ignored')\n")
                try directory.write("NOTES.md", "ignored\n")
                try await git("add", "-A")
                try await git("commit", "-qm", "pay")
                let pay = try await run("--changed-since", "HEAD~1", "--junit", "selected.xml")
                #expect(pay.exitCode == 0, "\(pay.stdout)\(pay.stderr)")
                #expect(pay.stdout.contains("1 scenarios, 1 passed"), "\(pay.stdout)")
                #expect(
                    pay.stdout.contains("selection: changed since HEAD~1 (")
                        && pay.stdout.contains("2 files: 1 of 3 tests ran, 2 left out"),
                    "\(pay.stdout)")
                #expect(pay.stdout.contains("s saved by history"), "\(pay.stdout)")
                let junit = directory.read("selected.xml")
                #expect(junit.contains(#"tests="3" failures="0" errors="0" skipped="2""#), "\(junit)")
                #expect(
                    junit.contains(
                        #"<skipped message="not selected: its footprint touches none of the 2 changed files"/>"#),
                    "\(junit)")
                #expect(junit.contains(#"value="tests/test_cart.py::test_show_cart""#), "\(junit)")
                let report = try #require(
                    pay.stdout.split(separator: "\n").first { $0.hasPrefix("report: ") }?.dropFirst(8), "\(pay.stdout)")
                let html = try String(contentsOfFile: String(report), encoding: .utf8)
                #expect(html.contains("Left out by the selection (2)"), "the HTML report lists what was left out")

                // The handler of an endpoint changed, not committed: only the test that called it runs.
                try directory.write("server/carts/show.py", "def show(cart): return dict(cart)\n")
                let handler = try await run("--changed-since", "HEAD")
                #expect(handler.exitCode == 0, "\(handler.stdout)\(handler.stderr)")
                #expect(handler.stdout.contains("1 scenarios, 1 passed"), "\(handler.stdout)")
                #expect(handler.stderr.contains("1 of 3 tests run (1 calling a changed endpoint)"), "\(handler.stderr)")
                let verbose = try await run("--changed-since", "HEAD", "--verbose")
                #expect(
                    verbose.stderr.contains("GET api.shop.test/v1/carts/{id}, served by server/carts/show.py"),
                    "the reason names the endpoint and the file: \(verbose.stderr)")
                try await git("checkout", "-q", "--", "server/carts/show.py")

                // Nothing changed: nothing runs, and the run says so.
                let nothing = try await run("--changed-since", "HEAD")
                #expect(nothing.exitCode == 0, "\(nothing.stdout)\(nothing.stderr)")
                #expect(nothing.stdout.contains("0 scenarios"), "\(nothing.stdout)")
                #expect(nothing.stdout.contains("0 of 3 tests ran, 3 left out"), "\(nothing.stdout)")

                // A file no footprint tracks (a helper the tests may import): every test runs.
                try directory.write("tests/conftest.py", "HELPER = 1\n")
                let helper = try await run("--changed-since", "HEAD")
                #expect(helper.stdout.contains("3 scenarios, 3 passed"), "\(helper.stdout)")
                #expect(helper.stderr.contains("3 for a file no footprint tracks"), "\(helper.stderr)")
                try FileManager.default.removeItem(atPath: directory.file("tests/conftest.py"))

                // A new test runs, and its file is its own: the others are left out.
                try directory.write("tests/test_new.py", "def test_new():\n    assert True\n")
                try await git("add", "-A")
                try await git("commit", "-qm", "new")
                let new = try await run("--changed-since", "HEAD~1")
                #expect(new.exitCode == 0, "\(new.stdout)\(new.stderr)")
                #expect(new.stderr.contains("1 of 4 tests run (1 new)"), "\(new.stderr)")

                // A change the selection is told to ignore breaks a test: with every left-out test sampled, the failure
                // is a selection miss and fails the run; the next selection runs the test as one that failed lately.
                try directory.write("NOTES.md", "changed\n")
                try await git("commit", "-qam", "notes")
                let miss = try await run("--changed-since", "HEAD~1", "--sample", "1")
                #expect(miss.exitCode == 1, "\(miss.stdout)\(miss.stderr)")
                #expect(miss.stdout.contains("4 scenarios, 3 passed, 1 failed"), "\(miss.stdout)")
                #expect(miss.stdout.contains("0 of 4 tests ran") == false, "\(miss.stdout)")
                #expect(miss.stdout.contains("4 of them sampled (--sample)"), "\(miss.stdout)")
                #expect(
                    miss.stdout.contains(
                        "selection misses: 1 sampled test the selection left out failed: tests/test_pay.py::test_pay"),
                    "\(miss.stdout)")
                let again = try await run("--changed-since", "HEAD")
                #expect(again.exitCode == 1, "\(again.stdout)\(again.stderr)")
                #expect(again.stderr.contains("1 of 4 tests run (1 failed recently)"), "\(again.stderr)")
                #expect(again.stdout.contains("1 scenarios, 0 passed, 1 failed"), "\(again.stdout)")

                let bad = try await run("--changed-since", "no-such-branch")
                #expect(bad.exitCode == 2, "\(bad.stderr)")
                #expect(bad.stderr.contains("--changed-since no-such-branch: no such commit"), "\(bad.stderr)")
                let option = try await run("--changed-since=--output=x")
                #expect(option.exitCode == 2 && option.stderr.contains("no such commit"), "\(option.stderr)")
                let outside = try await run("--changed", "/etc/hostname")
                #expect(outside.exitCode == 2, "\(outside.stderr)")
                #expect(
                    outside.stderr.contains("--changed /etc/hostname: not a file in the repository"),
                    "\(outside.stderr)")
                let changed = try await run("--changed", "tests/test_new.py")
                #expect(
                    changed.stderr.contains("2 of 4 tests run (1 failed recently, 1 touching a changed file)"),
                    "\(changed.stderr)")
            }
        }
    }

    @Test("--order likely-failing: new tests and tests that failed lately are claimed first, each group longest first")
    func likelyFailingFirst() async throws {
        try await TemporaryDirectory.with { directory in
            func config(_ extra: String = "") throws {
                try directory.write(
                    "orchestrate.yml",
                    """
                    workers: 1
                    quarantine: { threshold: off }
                    suite:
                      command: "echo $ORCHESTRATE_SCENARIO_ID >> order.txt"
                      scenarios:
                        - { id: long, command: "sleep 0.6; echo long >> order.txt" }
                        - { id: middle, command: "sleep 0.3; echo middle >> order.txt" }
                        - { id: breaks, command: "echo breaks >> order.txt; test -f fixed" }
                        - { id: short }
                    \(extra)
                    """)
            }
            try config()
            try directory.write("fixed", "")
            let cli = OrchestrateCLI(
                directory: directory.path, database: try await TestPostgres.shared.makeDatabaseURL())
            func order(_ arguments: String...) async throws -> (order: [String], notes: String) {
                try? FileManager.default.removeItem(atPath: directory.file("order.txt"))
                let run = try await cli.run(["run", "--progress", "none"] + arguments)
                #expect(run.exitCode != nil, "\(run.stderr)")
                return (directory.read("order.txt").split(separator: "\n").map(String.init), run.stderr)
            }
            #expect(try await order().order.count == 4)
            // `breaks` fails from now on; a new test joins.
            try FileManager.default.removeItem(atPath: directory.file("fixed"))
            try config("    - { id: brand-new }")
            let makespan = try await order().order
            #expect(
                Array(makespan.prefix(3)) == ["brand-new", "long", "middle"], "the longest expected first: \(makespan)")
            #expect(Set(makespan.dropFirst(3)) == ["breaks", "short"], "\(makespan)")
            try config("    - { id: brand-new }\n    - { id: newer }")
            let likely = try await order("--order", "likely-failing")
            #expect(Array(likely.order.prefix(2)) == ["newer", "breaks"], "new, then failed lately: \(likely.order)")
            #expect(
                Array(likely.order.dropFirst(2).prefix(2)) == ["long", "middle"], "then the longest: \(likely.order)")
            #expect(Set(likely.order.dropFirst(4)) == ["short", "brand-new"], "\(likely.order)")
            #expect(
                likely.notes.contains("likely failures first: 2 of 6 tests (1 failed recently, 1 new)"),
                "\(likely.notes)")
        }
    }

    @Test(
        "pytest under coverage.py's per-test contexts: a changed source file runs only the tests that ran it, a changed import-time module every test that imported it"
    )
    func coverage() async throws {
        try await TemporaryDirectory.with { directory in
            try directory.write("shop/__init__.py", "")
            try directory.write("shop/rates.py", "VAT = 20\n")
            try directory.write(
                "shop/cart.py",
                "from shop.rates import VAT\n\ndef total(items):\n    return sum(items) * (100 + VAT) // 100\n")
            try directory.write("shop/pay.py", "def charge(amount):\n    return amount > 0\n")
            try directory.write(
                "tests/test_cart.py",
                "from shop.cart import total\n\ndef test_total():\n    assert total([100]) == 120\n\ndef test_empty():\n    assert total([]) == 0\n"
            )
            try directory.write(
                "tests/test_pay.py", "from shop.pay import charge\n\ndef test_charge():\n    assert charge(3)\n")
            try directory.write(".coveragerc", "[run]\ndynamic_context = test_function\n")
            try directory.write(".gitignore", ".orchestrate/\n__pycache__/\n*.stdout\n*.stderr\n")
            try directory.write(
                "orchestrate.yml",
                """
                workers: 2
                suite:
                  list: "python3 -m pytest --collect-only -q -p no:cacheprovider tests | grep ::"
                  command: >-
                    COVERAGE_FILE=$TMPDIR/.coverage python3 -m coverage run -m pytest -q -p no:cacheprovider
                    -o junit_family=xunit2 --junitxml=$ORCHESTRATE_ARTIFACTS_DIR/junit.xml {id}; status=$?;
                    COVERAGE_FILE=$TMPDIR/.coverage python3 -m coverage json -q --show-contexts
                    -o $ORCHESTRATE_ARTIFACTS_DIR/coverage.json; exit $status
                  results: junit
                  env: { PYTHONDONTWRITEBYTECODE: "1" }
                """)
            let cli = try await Self.committed(directory)
            func git(_ arguments: String...) async throws { try await Self.git(arguments, cli: cli) }
            let full = try await cli.run(["run", "--progress", "none"])
            #expect(full.stdout.contains("3 scenarios, 3 passed"), "\(full.stdout)\(full.stderr)")

            try directory.write("shop/pay.py", "def charge(amount):\n    return amount >= 1\n")
            let pay = try await cli.run(["run", "--progress", "none", "--changed-since", "HEAD"])
            #expect(pay.stderr.contains("1 of 3 tests run (1 touching a changed file)"), "\(pay.stderr)")
            #expect(pay.stdout.contains("1 scenarios, 1 passed"), "\(pay.stdout)")
            try await git("checkout", "-q", "--", "shop/pay.py")

            // rates.py runs only when it is imported, outside any test: it counts for every test of the processes that
            // imported it (here a process per test: the cart's).
            try directory.write("shop/rates.py", "VAT = 21\n")
            let rates = try await cli.run(["run", "--progress", "none", "--changed-since", "HEAD", "--verbose"])
            #expect(rates.exitCode == 1, "test_total fails at 21%: \(rates.stdout)\(rates.stderr)")
            #expect(rates.stdout.contains("2 scenarios, 1 passed, 1 failed"), "\(rates.stdout)")
            #expect(rates.stderr.contains("touches shop/rates.py"), "\(rates.stderr)")
            try await git("checkout", "-q", "--", "shop/rates.py")

            // A Python file no coverage measured (nothing imported it): every test runs. So does orchestrate.yml.
            try directory.write("shop/vat.py", "RATE = 20\n")
            let unmeasured = try await cli.run(["run", "--progress", "none", "--changed-since", "HEAD"])
            #expect(
                unmeasured.stderr.contains("3 of 3 tests run (")
                    && unmeasured.stderr.contains("for a file no footprint tracks"),
                "test_total also failed lately: \(unmeasured.stderr)")
            try FileManager.default.removeItem(atPath: directory.file("shop/vat.py"))
            try directory.write("orchestrate.yml", directory.read("orchestrate.yml") + "\nretries: 0\n")
            let config = try await cli.run(["run", "--progress", "none", "--changed-since", "HEAD"])
            #expect(
                config.stderr.contains("3 of 3 tests run (")
                    && config.stderr.contains("for a file every test depends on"),
                "\(config.stderr)")
        }
    }

    @Test(
        "scenarios written as commands name no file of their own: any changed file runs them, an ignored one does not")
    func commands() async throws {
        try await TemporaryDirectory.with { directory in
            try directory.write("checks/cart.py", "assert 1 == 1\n")
            try directory.write("README.md", "checks\n")
            try directory.write(".gitignore", ".orchestrate/\n__pycache__/\n*.stdout\n*.stderr\n")
            try directory.write(
                "orchestrate.yml",
                """
                workers: 2
                suite:
                  scenarios:
                    - { id: "checks/cart.py::cart", command: "python3 checks/cart.py" }
                    - { id: pay, command: "true" }
                selection:
                  ignore: ["*.md"]
                """)
            let cli = try await Self.committed(directory)
            let full = try await cli.run(["run", "--progress", "none"])
            #expect(full.stdout.contains("2 scenarios, 2 passed"), "\(full.stdout)\(full.stderr)")

            try directory.write("README.md", "checks, described\n")
            let readme = try await cli.run(["run", "--progress", "none", "--changed-since", "HEAD"])
            #expect(readme.stderr.contains("0 of 2 tests run"), "\(readme.stderr)")
            // cart's own file (its id names it): cart runs for it, and pay, which names none, may run it too.
            try directory.write("checks/cart.py", "assert 1 == 2\n")
            let script = try await cli.run(["run", "--progress", "none", "--changed-since", "HEAD"])
            #expect(script.exitCode == 1, "\(script.stdout)\(script.stderr)")
            #expect(
                script.stderr.contains("2 of 2 tests run (1 naming no file of their own, 1 touching a changed file)"),
                "\(script.stderr)")
        }
    }
}
