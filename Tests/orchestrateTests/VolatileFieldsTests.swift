import Foundation
import OrchestrateTesting
import Testing

/// Fields that change by themselves, learned from passing live attempts against a real backend whose answers carry a
/// counter (`hit`): proposed for mock.ignore, said by the evidence filter, and left out once ignored.
@Suite("Volatile fields, learned", .timeLimit(.minutes(5)))
struct VolatileFieldsTests {
    @Test(
        "a counter in a live body is proposed as mock.ignore YAML with how often it changed and where; the evidence filter says it left it out; ignored, it is proposed no more"
    )
    func suggestIgnores() async throws {
        try await TestUpstream.with { upstream in
            try await TemporaryDirectory.with { directory in
                func config(_ extra: String = "") throws {
                    try directory.write(
                        "orchestrate.yml",
                        """
                        workers: 1
                        retries: 0
                        quarantine: { threshold: off }
                        suite:
                          scenarios:
                            - { id: items, command: "curl -sf $ORCHESTRATE_MOCK_URL/api.test/v1/items > /dev/null && [ ! -e \(directory.file("fail")) ]" }
                        mock:
                          hosts: { api.test: "\(upstream.url)" }
                        \(extra)
                        """)
                }
                try config()
                let cli = OrchestrateCLI(
                    directory: directory.path, database: try await TestPostgres.shared.makeDatabaseURL())
                #expect(try await cli.run(["run", "--mode", "record", "--progress", "none"]).exitCode == 0)
                for _ in 0..<2 {
                    let live = try await cli.run(["run", "--mode", "live", "--progress", "none"])
                    #expect(live.exitCode == 0, "\(live.stdout)\(live.stderr)")
                }
                let suggested = try await cli.run(["suggest", "ignores"])
                #expect(suggested.exitCode == 0, "\(suggested.stderr)")
                #expect(
                    suggested.stdout.contains(
                        #"      - "$.hit"  # response body; changed in 2 of 2 passing live attempts: items"#),
                    "\(suggested.stdout)")
                #expect(suggested.stdout.contains("mock:\n  ignore:\n    json:\n"), "\(suggested.stdout)")
                #expect(
                    !suggested.stdout.contains("$.path"), "what did not change is not proposed: \(suggested.stdout)")
                let stricter = try await cli.run(["suggest", "ignores", "--min", "3"])
                #expect(stricter.stdout.contains("no field changed by itself in 3 or more"), "\(stricter.stdout)")
                #expect(try await cli.run(["suggest", "ignores", "--min", "0"]).exitCode == 2)

                // The test fails live: its verdict's evidence leaves the counter out, and says so.
                try directory.write("fail", "")
                let failing = try await cli.run(["run", "--mode", "live", "--progress", "none"])
                #expect(failing.exitCode == 1, "\(failing.stdout)\(failing.stderr)")
                #expect(
                    failing.stdout.contains("left out as noise, changed in passing live attempts too: $.hit"),
                    "\(failing.stdout)")
                #expect(!failing.stdout.contains("$.hit: "), "no difference of it as evidence: \(failing.stdout)")

                // Ignored, it is neither proposed nor noise: it is no evidence at all.
                try config("  ignore: { json: [\"$.hit\"] }")
                let after = try await cli.run(["suggest", "ignores"])
                #expect(after.stdout.contains("no field changed by itself"), "\(after.stdout)\(after.stderr)")
                let ignored = try await cli.run(["run", "--mode", "live", "--progress", "none"])
                #expect(ignored.exitCode == 1 && !ignored.stdout.contains("$.hit"), "\(ignored.stdout)")
            }
        }
    }
}
