import Foundation
import OrchestrateTesting
import Testing

/// What attempts keep is stored in the database, so that any host can read it back.
@Suite("Kept files in the database", .timeLimit(.minutes(2)))
struct ArtifactsTests {
    @Test(
        "an attempt's artifacts and logs are stored up to the cap, scrubbed of secrets, and written back on another host"
    )
    func storedAndWrittenBack() async throws {
        try await TemporaryDirectory.with { directory in
            try directory.write(
                "orchestrate.yml",
                """
                workers: 1
                artifacts:
                  max-bytes: 3000
                suite:
                  env: { API_TOKEN: "s3cr3t-token-value" }
                  scenarios:
                    - id: shot
                      command: >-
                        mkdir -p "$ORCHESTRATE_ARTIFACTS_DIR/screens" &&
                        head -c 2000 /dev/urandom > "$ORCHESTRATE_ARTIFACTS_DIR/screens/one.png" &&
                        head -c 2000 /dev/urandom > "$ORCHESTRATE_ARTIFACTS_DIR/screens/two.png" &&
                        cp "$ORCHESTRATE_ARTIFACTS_DIR/screens/one.png" original.png &&
                        echo "login with $API_TOKEN failed" >&2 && exit 1
                """)
            let cli = OrchestrateCLI(
                directory: directory.path, database: try await TestPostgres.shared.makeDatabaseURL())
            let run = try await cli.run(["run", "--progress", "none"], name: "run")
            #expect(run.exitCode == 1, "\(run.stdout)\(run.stderr)")
            let runID = try #require(run.stdout.split(separator: " ").dropFirst().first.map(String.init))
            // Another host has none of this host's folders.
            try FileManager.default.removeItem(atPath: directory.file(".orchestrate/runs"))
            let written = try await cli.run(["artifacts", runID, "shot", "--out", "out"], name: "artifacts")
            #expect(written.exitCode == 0, "\(written.stderr)")
            let one = try Data(contentsOf: URL(fileURLWithPath: directory.file("out/attempt-1/screens/one.png")))
            #expect(one == (try Data(contentsOf: URL(fileURLWithPath: directory.file("original.png")))))
            #expect(
                !FileManager.default.fileExists(atPath: directory.file("out/attempt-1/screens/two.png")), "past the cap"
            )
            #expect(
                written.stdout.contains(
                    "not stored (over the attempt's artifacts.max-bytes): attempt-1/screens/two.png  2000 bytes"))
            let log = directory.read("out/attempt-1/stderr.log")
            #expect(log.contains("login with") && !log.contains("s3cr3t-token-value"), "\(log)")
            let report = try await cli.run(["report", runID, "--html", "report.html"], name: "report")
            #expect(report.exitCode == 0, "\(report.stderr)")
            #expect(directory.read("report.html").contains("attempt-1/screens/one.png (2000 bytes)"))
            let none = try await cli.run(["artifacts", runID, "nope", "--out", "out"], name: "none")
            #expect(none.exitCode == 2 && none.stderr.contains("has no scenario nope"), "\(none.stderr)")
        }
    }
}
