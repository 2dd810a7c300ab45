import Foundation
import OrchestrateTesting
import Testing

/// Failures grouped by cause: a signature per failure, the run's HTML report grouped by it, `orchestrate failures`
/// across runs.
@Suite("Failures grouped by cause", .timeLimit(.minutes(5)))
struct FailureGroupsTests {
    @Test(
        "failures whose messages differ only in numbers and ids share a signature across tests and runs; a failing exchange is part of it"
    )
    func groups() async throws {
        try await TestUpstream.with { upstream in
            try await TemporaryDirectory.with { directory in
                try directory.write(
                    "orchestrate.yml",
                    """
                    workers: 4
                    retries: 0
                    quarantine: { threshold: off }
                    suite:
                      scenarios:
                        - { id: cart-a, command: "echo \\"order $(od -An -N4 -tu4 /dev/urandom | tr -d ' '): expected 3 items, got $$\\" >&2; exit 1" }
                        - { id: cart-b, command: "echo \\"order $(od -An -N4 -tu4 /dev/urandom | tr -d ' '): expected 5 items, got $$\\" >&2; exit 1" }
                        - { id: login, command: "echo 'login refused for ann' >&2; exit 1" }
                        - { id: pay, command: "curl -sSf $ORCHESTRATE_MOCK_URL/api.test/v1/orders/$$/missing > /dev/null" }
                        - { id: fine, command: "true" }
                    mock:
                      mode: live
                      hosts: { api.test: "\(upstream.url)" }
                    """)
                let cli = OrchestrateCLI(
                    directory: directory.path, database: try await TestPostgres.shared.makeDatabaseURL())
                var runIDs: [String] = []
                for _ in 0..<2 {
                    let run = try await cli.run(["run", "--progress", "none"])
                    #expect(run.exitCode == 1, "\(run.stdout)\(run.stderr)")
                    runIDs.append(try #require(run.stdout.split(separator: " ").dropFirst().first.map(String.init)))
                }

                let json = try await cli.run(["failures", "--format", "json"])
                let lines = try #require(
                    try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]],
                    "\(json.stdout)\(json.stderr)")
                #expect(lines.count == 3, "cart-a and cart-b share one: \(lines)")
                let cart = try #require(lines.first, "\(lines)")
                #expect(cart["signature"] as? String == "order <n>: expected <n> items, got <n>", "\(cart)")
                #expect(
                    cart["tests"] as? Int == 2 && cart["failures"] as? Int == 4 && cart["runs"] as? Int == 2, "\(cart)")
                #expect(["cart-a", "cart-b"].contains(cart["example_test"] as? String ?? ""), "\(cart)")
                #expect(
                    (cart["example_message"] as? String)?.hasPrefix("order ") == true, "the message as it was: \(cart)")
                let signatures = Set(lines.compactMap { $0["signature"] as? String })
                #expect(
                    signatures.contains {
                        $0.hasPrefix("curl: ") && $0.hasSuffix(" · GET api.test/v1/orders/{id}/missing → 404")
                    },
                    "the failing exchange, its path's id made alike: \(signatures)")
                #expect(signatures.contains("login refused for ann"), "\(signatures)")

                let table = try await cli.run(["failures", "--since", "1h"])
                #expect(table.exitCode == 0 && table.stdout.hasPrefix("TESTS"), "\(table.stdout)\(table.stderr)")
                #expect(table.stdout.contains("order <n>: expected <n> items, got <n>"), "\(table.stdout)")
                let bad = try await cli.run(["failures", "--since", "soon"])
                #expect(bad.exitCode == 2 && bad.stderr.contains("--since soon"), "\(bad.stderr)")

                let html = directory.read(".orchestrate/reports/\(runIDs[1])/report.html")
                let causes = try #require(html.range(of: "Failures by cause"), "the report groups its failures")
                let section = html[causes.lowerBound...].prefix(3000)
                #expect(
                    section.contains(
                        "<td>2</td><td><code>order &lt;n&gt;: expected &lt;n&gt; items, got &lt;n&gt;</code>"),
                    "\(section)")
            }
        }
    }

    @Test(
        "flaky --by endpoint: a flaky endpoint's nondeterministic verdict and a missing one's failed attempts, ranked; a test's own failure names none"
    )
    func endpoints() async throws {
        try await TestUpstream.with { upstream in
            try await TemporaryDirectory.with { directory in
                try directory.write(
                    "orchestrate.yml",
                    """
                    workers: 3
                    retries: 1
                    quarantine: { threshold: off }
                    suite:
                      scenarios:
                        - { id: pay, command: "curl -sf $ORCHESTRATE_MOCK_URL/api.test/v1/pay/42/unavailable-once > /dev/null" }
                        - { id: missing, command: "curl -sf $ORCHESTRATE_MOCK_URL/api.test/v1/orders/7/missing > /dev/null" }
                        - { id: own, command: "curl -sf $ORCHESTRATE_MOCK_URL/api.test/v1/items > /dev/null && exit 1" }
                    mock:
                      mode: live
                      hosts: { api.test: "\(upstream.url)" }
                    """)
                let cli = OrchestrateCLI(
                    directory: directory.path, database: try await TestPostgres.shared.makeDatabaseURL())
                let run = try await cli.run(["run", "--progress", "none"])
                #expect(run.exitCode == 1 && run.stdout.contains("1 nondeterministic"), "\(run.stdout)\(run.stderr)")
                let json = try await cli.run(["flaky", "--by", "endpoint", "--format", "json"])
                let lines = try #require(
                    try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]],
                    "\(json.stdout)\(json.stderr)")
                #expect(lines.count == 2, "the test's own failure met no endpoint: \(lines)")
                #expect(
                    lines.first?["endpoint"] as? String == "GET api.test/v1/pay/{id}/unavailable-once"
                        && lines.first?["nondeterministic"] as? Int == 1
                        && lines.first?["failed_attempts"] as? Int == 1,
                    "the flaky endpoint first: \(lines)")
                #expect(
                    lines.last?["endpoint"] as? String == "GET api.test/v1/orders/{id}/missing"
                        && lines.last?["nondeterministic"] as? Int == 0 && lines.last?["failed_attempts"] as? Int == 2,
                    "\(lines)")
                let table = try await cli.run(["flaky", "--by", "endpoint"])
                #expect(
                    table.stdout.hasPrefix("NONDETERMINISTIC")
                        && table.stdout.contains("GET api.test/v1/orders/{id}/missing"),
                    "\(table.stdout)\(table.stderr)")
                let bad = try await cli.run(["flaky", "--by", "host"])
                #expect(bad.exitCode == 2, "\(bad.stderr)")
            }
        }
    }
}
