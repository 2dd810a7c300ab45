import Foundation
import OrchestrateTesting
import Testing

/// `retries: { count: N, when: evidence }` against a real backend the test starts: only failures with a cause outside
/// the test are retried, and the reports say which cause.
@Suite("Retries that need a reason", .timeLimit(.minutes(5)))
struct RetryWhenTests {
    @Test(
        "an upstream's 503 and a timeout are retried with their evidence in the summary, JUnit and HTML; a test's own failure is not retried"
    )
    func evidence() async throws {
        try await TestUpstream.with { upstream in
            try await TemporaryDirectory.with { directory in
                try directory.write(
                    "orchestrate.yml",
                    """
                    workers: 2
                    retries: { count: 2, when: evidence }
                    quarantine: { threshold: off }
                    suite:
                      scenarios:
                        - { id: outage, command: "curl -sf $ORCHESTRATE_MOCK_URL/api.test/v1/unavailable-once > /dev/null" }
                        - { id: assertion, command: "curl -sf $ORCHESTRATE_MOCK_URL/api.test/v1/items > /dev/null && exit 1" }
                        - { id: hang, command: "sleep 30", timeout: 1s }
                    mock:
                      mode: live
                      hosts: { api.test: "\(upstream.url)" }
                    """)
                let cli = OrchestrateCLI(
                    directory: directory.path, database: try await TestPostgres.shared.makeDatabaseURL())
                let run = try await cli.run(["run", "--progress", "none"])
                #expect(run.exitCode == 1, "\(run.stdout)\(run.stderr)")
                let runID = try #require(run.stdout.split(separator: " ").dropFirst().first.map(String.init))
                let evidence = "retried: GET api.test/v1/unavailable-once → 503"
                #expect(run.stdout.contains(evidence), "\(run.stdout)")
                let junit = directory.read(".orchestrate/reports/\(runID)/junit.xml")
                func attempts(_ id: String) -> String? {
                    guard let start = junit.range(of: #"name="\#(id)""#) else { return nil }
                    let rest = junit[start.upperBound...]
                    guard let property = rest.range(of: #"<property name="orchestrate.attempts" value=""#) else {
                        return nil
                    }
                    return String(rest[property.upperBound...].prefix { $0 != "\"" })
                }
                #expect(attempts("outage") == "2", "the 503 was retried, and the retry passed: \(junit)")
                #expect(attempts("assertion") == "1", "its own failure reproduces: not retried: \(junit)")
                #expect(attempts("hang") == "3", "a timeout is a cause outside the test: \(junit)")
                #expect(junit.contains(evidence), "\(junit)")
                #expect(junit.contains("timed out after 1"), "\(junit)")
                #expect(junit.contains("; retried: the timeout"), "\(junit)")
                let html = directory.read(".orchestrate/reports/\(runID)/report.html")
                #expect(html.contains("retried: GET api.test/v1/unavailable-once → 503"), "the attempt's title")

                // A bare number retries any failure, as before.
                try directory.write(
                    "orchestrate.yml",
                    """
                    retries: 1
                    quarantine: { threshold: off }
                    suite:
                      scenarios:
                        - { id: assertion, command: "exit 1" }
                    """)
                let any = try await cli.run(["run", "--progress", "none"])
                let anyID = try #require(any.stdout.split(separator: " ").dropFirst().first.map(String.init))
                #expect(
                    directory.read(".orchestrate/reports/\(anyID)/junit.xml").contains(
                        #"<property name="orchestrate.attempts" value="2"/>"#))
                // --retry-when evidence on the command line withholds it.
                let flag = try await cli.run(["run", "--progress", "none", "--retry-when", "evidence"])
                let flagID = try #require(flag.stdout.split(separator: " ").dropFirst().first.map(String.init))
                #expect(
                    directory.read(".orchestrate/reports/\(flagID)/junit.xml").contains(
                        #"<property name="orchestrate.attempts" value="1"/>"#))
                try directory.write(
                    "orchestrate.yml", "retries: { count: 1, when: sometimes }\nsuite: { command: \"true\" }\n")
                let bad = try await cli.run(["run", "--progress", "none"])
                #expect(
                    bad.exitCode == 2 && bad.stderr.contains("orchestrate.yml:1")
                        && bad.stderr.contains("retries.when must be any (every failure) or evidence"),
                    "\(bad.stderr)")
                try directory.write("orchestrate.yml", "retries: { when: evidence }\nsuite: { command: \"true\" }\n")
                let uncounted = try await cli.run(["run", "--progress", "none"])
                #expect(
                    uncounted.exitCode == 2 && uncounted.stderr.contains("orchestrate.yml:1")
                        && uncounted.stderr.contains("retries needs count"),
                    "\(uncounted.stderr)")
            }
        }
    }

    @Test(
        "in a batch the process's exchanges cannot be told apart: an upstream's 503 that one test met is evidence for each failed test of the process"
    )
    func batch() async throws {
        try await TestUpstream.with { upstream in
            try await TemporaryDirectory.with { directory in
                try directory.write(
                    "shop/tests/test_shop.py",
                    """
                    import os, urllib.request

                    def test_a_outage():
                        urllib.request.urlopen(os.environ["ORCHESTRATE_MOCK_URL"] + "/api.test/v1/unavailable-once").read()

                    def test_b_assertion():
                        assert os.environ["ORCHESTRATE_ATTEMPT"] != "1", "fails on its first attempt"

                    def test_c_pass():
                        assert True
                    """)
                try directory.write(
                    "shop/orchestrate.yml",
                    """
                    workers: 1
                    retries: { count: 1, when: evidence }
                    quarantine: { threshold: off }
                    suite:
                      list: "python3 -m pytest --collect-only -q -p no:cacheprovider tests | grep ::"
                      command: "python3 -m pytest -q -p no:cacheprovider -o junit_family=xunit2 --junitxml=$ORCHESTRATE_ARTIFACTS_DIR/junit.xml {ids}"
                      results: junit
                      batch: { size: 3, auto: false }
                      env: { PYTHONDONTWRITEBYTECODE: "1" }
                    mock:
                      mode: live
                      hosts: { api.test: "\(upstream.url)" }
                    """)
                let cli = OrchestrateCLI(
                    directory: directory.file("shop"), database: try await TestPostgres.shared.makeDatabaseURL())
                let run = try await cli.run(["run", "--progress", "none"])
                #expect(run.exitCode == 0, "both failures retried and passed: \(run.stdout)\(run.stderr)")
                let rows = try await queryRows(
                    cli.environment["ORCHESTRATE_DATABASE_URL"]!,
                    """
                    SELECT scenario_id, attempt, pid, coalesce(retry_evidence, '') FROM attempts
                    WHERE state = 'finished' ORDER BY scenario_id, attempt
                    """, as: (String, Int32, Int32, String).self)
                #expect(
                    rows.map { "\($0.0) \($0.1)" } == [
                        "tests/test_shop.py::test_a_outage 1", "tests/test_shop.py::test_a_outage 2",
                        "tests/test_shop.py::test_b_assertion 1", "tests/test_shop.py::test_b_assertion 2",
                        "tests/test_shop.py::test_c_pass 1",
                    ], "\(rows)")
                #expect(Set(rows.filter { $0.1 == 1 }.map(\.2)).count == 1, "the first attempts shared a process")
                let evidence = rows.filter { $0.1 == 1 && !$0.0.hasSuffix("test_c_pass") }.map(\.3)
                #expect(evidence == Array(repeating: "GET api.test/v1/unavailable-once → 503", count: 2), "\(rows)")
            }
        }
    }
}
