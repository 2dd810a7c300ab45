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
                #expect(junit.contains("retried: timed out after"), "\(junit)")
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
            }
        }
    }
}
