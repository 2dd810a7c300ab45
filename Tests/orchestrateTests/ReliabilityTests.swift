import Foundation
import OrchestrateTesting
import ProcessSupervisor
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What a run survives: the README's *Reliability* section names these tests.
@Suite("Reliability under hostile conditions", .timeLimit(.minutes(3)))
struct ReliabilityTests {
    @Test("a slot whose supervisor is killed mid-run heals: every scenario passes once, no retry spent, nothing outlives it")
    func supervisorKilled() async throws {
        try await TemporaryDirectory.with { directory in
            // The victim's first execution blocks, with a child in its group; later ones pass at once.
            try directory.write(
                "orchestrate.yml",
                """
                workers: 2
                retries: 0
                suite:
                  command: "true"
                  scenarios:
                    - id: victim
                      command: "echo $$ $PPID >> starts; if [ ! -f killed ]; then sleep 300 & echo $! > child; wait; fi"
                    - { id: a }
                    - { id: b }
                    - { id: c }
                    - { id: d }
                    - { id: e }
                """)
            let cli = OrchestrateCLI(directory: directory.path, database: try await TestPostgres.shared.makeDatabaseURL())
            let run = try cli.launch(["run", "--progress", "lines"], name: "run")
            let (shell, supervisor) = try #require(
                await eventuallyValue(timeout: .seconds(30)) { () -> (Int32, Int32)? in
                    let fields = directory.read("starts").split(separator: " ").compactMap {
                        Int32($0.trimmingCharacters(in: .whitespacesAndNewlines))
                    }
                    return fields.count == 2 ? (fields[0], fields[1]) : nil
                })
            let child = try #require(await eventuallyValue { Int32(directory.read("child").trimmingCharacters(in: .whitespacesAndNewlines)) })
            try directory.write("killed", "")
            kill(supervisor, SIGKILL)
            let result = cli.output(await run.wait(), name: "run")
            #expect(result.exitCode == 0, "\(result.stdout)\(result.stderr)")
            #expect(result.stdout.contains("6 scenarios, 6 passed, 0 failed"), "\(result.stdout)")
            #expect(result.stderr.contains("supervisor process died running victim"), "\(result.stderr)")
            #expect(directory.read("starts").split(separator: "\n").count == 2, "the victim ran again, once")
            #expect(!processExists(shell) && !processExists(child), "the killed attempt's processes outlived its supervisor")
            // One finished attempt per scenario, each the first (no retry spent); the lost execution is kept apart.
            let database = try #require(cli.environment["ORCHESTRATE_DATABASE_URL"])
            let rows = try await queryRows(
                database, "SELECT scenario_id, state, attempt, coalesce(outcome, '') FROM attempts ORDER BY scenario_id, id",
                as: (String, String, Int, String).self)
            #expect(rows.filter { $0.1 == "finished" }.count == 6)
            #expect(rows.allSatisfy { $0.2 == 1 && ($0.1 == "abandoned" || $0.3 == "passed") }, "\(rows)")
            #expect(rows.filter { $0.0 == "victim" }.map(\.1) == ["abandoned", "finished"], "\(rows)")
        }
    }
}
