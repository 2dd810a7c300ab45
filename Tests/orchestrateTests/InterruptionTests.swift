import Foundation
import OrchestrateTesting
import ProcessSupervisor
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Killing or interrupting the coordinator, then finishing the run with `--resume`.
@Suite("Interruption and resume", .timeLimit(.minutes(3)))
struct InterruptionTests {
    /// Quick scenarios count their executions in files; `slow` blocks on its first execution only.
    func writeSuite(_ directory: TemporaryDirectory) throws {
        try directory.write(
            "orchestrate.yml",
            """
            workers: 2
            suite:
              timeout: 120s
              command: "echo x >> runs-{id}"
              scenarios:
                - { id: slow, command: "echo x >> runs-slow; test -f slow.blocked || { echo $$ > slow.blocked; sleep 300; }" }
                - { id: q1 }
                - { id: q2 }
                - { id: q3 }
                - { id: q4 }
            """)
    }

    func runID(_ directory: TemporaryDirectory, _ cli: OrchestrateCLI) async throws -> String {
        let runs = try await cli.run(["runs", "--format", "json"], name: "runs")
        let list = try #require(try JSONSerialization.jsonObject(with: Data(runs.stdout.utf8)) as? [[String: Any]])
        return try #require(list.first?["id"] as? String)
    }

    /// Waits until the slow scenario is blocked and the quick ones have run once, their results recorded.
    func waitForBlockedSlowScenario(_ directory: TemporaryDirectory, _ cli: OrchestrateCLI) async throws -> Int32 {
        let database = try #require(cli.environment["ORCHESTRATE_DATABASE_URL"])
        let ready = try await eventually(timeout: .seconds(30)) {
            guard FileManager.default.fileExists(atPath: directory.file("slow.blocked")) else { return false }
            let finished = try await queryRows(
                database, "SELECT count(*) FROM attempts WHERE state = 'finished'", as: Int64.self)
            return finished.first == 4
        }
        #expect(ready)
        return try #require(Int32(directory.read("slow.blocked").trimmingCharacters(in: .whitespacesAndNewlines)))
    }

    @Test(
        "after a SIGKILL of the coordinator its scenarios die, and --resume completes the run with no duplicate results"
    )
    func killAndResume() async throws {
        try await TemporaryDirectory.with { directory in
            try writeSuite(directory)
            let cli = OrchestrateCLI(
                directory: directory.path, database: try await TestPostgres.shared.makeDatabaseURL())
            let coordinator = try cli.launch(["run"], name: "first")
            let slowPID = try await waitForBlockedSlowScenario(directory, cli)
            // The whole process group, as a cancelled CI job does.
            kill(-(try #require(coordinator.pid)), SIGKILL)
            _ = await coordinator.wait()
            // Children die with their worker: the orphaned scenario's process group is ended.
            #expect(await eventually { !processExists(slowPID) }, "the scenario outlived its coordinator")

            let id = try await runID(directory, cli)
            let resumed = try await cli.run(["run", "--resume", id], name: "resume")
            #expect(resumed.exitCode == 0, "\(resumed.stdout)\(resumed.stderr)")
            #expect(resumed.stdout.contains("5 scenarios, 5 passed, 0 failed"), "\(resumed.stdout)")
            // What passed before the kill did not run again; the killed attempt ran again, once.
            for quick in 1...4 { #expect(directory.read("runs-q\(quick)") == "x\n") }
            #expect(directory.read("runs-slow") == "x\nx\n")
            let junit = directory.read(".orchestrate/reports/\(id)/junit.xml")
            #expect(junit.components(separatedBy: "<testcase ").count == 6)
            #expect(!junit.contains("<failure"))
            #expect(junit.contains(#"<property name="orchestrate.attempts" value="1"/>"#))
            #expect(!junit.contains(#"<property name="orchestrate.attempts" value="2"/>"#))
        }
    }

    @Test("Ctrl-C stops launching, ends the running scenarios, marks the run interrupted; resume finishes it")
    func interruptAndResume() async throws {
        try await TemporaryDirectory.with { directory in
            try writeSuite(directory)
            let cli = OrchestrateCLI(
                directory: directory.path, database: try await TestPostgres.shared.makeDatabaseURL())
            let coordinator = try cli.launch(["run"], name: "first")
            let slowPID = try await waitForBlockedSlowScenario(directory, cli)
            kill(try #require(coordinator.pid), SIGINT)
            let first = cli.output(await coordinator.wait(), name: "first")
            #expect(first.exitCode == 130, "\(first.stdout)\(first.stderr)")
            #expect(first.stdout.contains("interrupted"))
            #expect(first.stdout.contains("resume with: orchestrate run --resume"))
            #expect(!processExists(slowPID))

            let runs = try await cli.run(["runs", "--format", "json"], name: "runs")
            let list = try #require(try JSONSerialization.jsonObject(with: Data(runs.stdout.utf8)) as? [[String: Any]])
            #expect(list.first?["state"] as? String == "interrupted")
            #expect(list.first?["pending"] as? Int == 1)

            let id = try await runID(directory, cli)
            let resumed = try await cli.run(["run", "--resume", id], name: "resume")
            #expect(resumed.exitCode == 0, "\(resumed.stdout)\(resumed.stderr)")
            for quick in 1...4 { #expect(directory.read("runs-q\(quick)") == "x\n") }
            #expect(directory.read("runs-slow") == "x\nx\n")
        }
    }

    @Test(
        "a second SIGINT ends a stop that waits (a scenario that ignores SIGTERM) at once: 130, and the line that says how to resume"
    )
    func secondSignal() async throws {
        try await TemporaryDirectory.with { directory in
            try directory.write(
                "orchestrate.yml",
                """
                suite:
                  scenarios:
                    - { id: stubborn, command: "trap 'echo term > got' TERM; echo $$ > started; for i in $(seq 600); do sleep 0.1; done" }
                """)
            let cli = OrchestrateCLI(
                directory: directory.path, database: try await TestPostgres.shared.makeDatabaseURL())
            let run = try cli.launch(["run", "--progress", "lines"], name: "run")
            #expect(
                await eventually(timeout: .seconds(30)) {
                    FileManager.default.fileExists(atPath: directory.file("started"))
                })
            let pid = try #require(run.pid)
            kill(pid, SIGINT)
            // The first stops the run gracefully: the scenario gets SIGTERM, which it ignores, and 5 s of grace.
            #expect(
                await eventually(timeout: .seconds(10)) {
                    FileManager.default.fileExists(atPath: directory.file("got"))
                })
            let second = ContinuousClock.now
            kill(pid, SIGINT)
            let result = cli.output(await run.wait(), name: "run")
            #expect(ContinuousClock.now - second < .seconds(4), "the second signal did not end it at once")
            #expect(result.exitCode == 130, "\(result.stdout)\(result.stderr)")
            #expect(result.stderr.contains("orchestrate stopped at once; run "), "\(result.stderr)")
            #expect(result.stderr.contains("is left unfinished: orchestrate run --resume"), "\(result.stderr)")
        }
    }
}
