import Foundation
import OrchestrateModel
import OrchestrateTesting
import ProcessSupervisor
import Testing

/// What orchestrate prints: never the end of a run (a closed pipe, a full disk), and never raw control characters from
/// outside. docs/reliability.md names these tests.
@Suite(
    "The console: a closed or full one never ends a run; what came from outside is printed escaped",
    .timeLimit(.minutes(3)))
struct ConsoleTests {
    @Test(
        "`run 2>&1 | head -1` and `run >/dev/full 2>&1`: the run finishes, settles and records its exit code",
        arguments: ["2>&1 | head -1", ">/dev/full 2>&1"])
    func closedConsole(redirect: String) async throws {
        try await TemporaryDirectory.with { directory in
            let scenarios = (1...12).map { "    - { id: s\($0) }" }.joined(separator: "\n")
            try directory.write(
                "suite/orchestrate.yml",
                """
                workers: 2
                suite:
                  command: "echo {id} says hello; [ {id} != s7 ]"
                  scenarios:
                \(scenarios)
                """)
            let cli = OrchestrateCLI(
                directory: directory.file("suite"), database: try await TestPostgres.shared.makeDatabaseURL())
            // The status of orchestrate itself, whatever becomes of the pipe it writes to.
            let script =
                "{ \(ShellWord.quote(OrchestrateCLI.executable)) run --progress lines --verbose \(redirect.hasPrefix("2>&1") ? "2>&1" : redirect); "
                + "echo $? > status; }" + (redirect.hasPrefix("2>&1") ? " | head -1" : "")
            var command = SupervisedCommand.shell(script, environment: cli.environment)
            command.workingDirectory = directory.file("suite")
            command.stdoutPath = directory.file("shell.stdout")
            command.timeout = .seconds(120)
            let termination = try await SupervisedProcess.run(command)
            #expect(termination.reason == .exited(0))
            // A scenario failed: 1, not a signal (132 was SIGILL, from a write that trapped).
            #expect(directory.read("suite/status").trimmingCharacters(in: .whitespacesAndNewlines) == "1")
            let runs = try await queryRows(
                try #require(cli.environment["ORCHESTRATE_DATABASE_URL"]),
                "SELECT state, coalesce(exit_code, -1) FROM runs", as: (String, Int32).self
            )
            #expect(runs.count == 1 && runs[0].0 == "finished" && runs[0].1 == 1, "\(runs)")
        }
    }
}
