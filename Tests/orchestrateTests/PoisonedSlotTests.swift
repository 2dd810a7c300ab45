import Foundation
import OrchestrateTesting
import ProcessSupervisor
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What one scenario leaves in its slot is never the next one's failure. docs/reliability.md names these
/// tests.
@Suite(
    "A poisoned slot: what a scenario leaves is removed, or the slot is retired; never blamed on the next",
    .timeLimit(.minutes(3)))
struct PoisonedSlotTests {
    @Test(
        "a tree deeper than PATH_MAX in HOME, with folders nobody may enter, is removed: the scenarios after it pass, none flaky"
    )
    func deepTree() async throws {
        try await TemporaryDirectory.with { directory in
            // 250 folders of 20 characters: 5,250 bytes of path below HOME, past PATH_MAX (4,096); every other one mode
            // 0; a link to / and a FIFO at the bottom; names that are not UTF-8. (Python: the shell's cd gives up past
            // PATH_MAX.)
            try directory.write(
                "suite/deep.py",
                """
                import os
                os.chdir(os.environ["HOME"])
                open(b"not-utf8-\\xff\\xfe", "w").write("x")
                for i in range(250):
                    os.mkdir("d0123456789012345678")
                    os.chdir("d0123456789012345678")
                    open("f", "w").write("x")
                    if i % 2:
                        os.chmod("..", 0)
                os.symlink("/", "root")
                os.mkfifo("pipe")
                os.mkdir(b"\\xc3\\x28 folder")
                """)
            try directory.write(
                "suite/orchestrate.yml",
                """
                workers: 1
                retries: 1
                suite:
                  command: "test -z \\"$(ls -A \\"$HOME\\")\\""
                  scenarios:
                    - { id: deep, command: "python3 deep.py" }
                    - { id: a }
                    - { id: b }
                    - { id: c }
                """)
            let cli = OrchestrateCLI(
                directory: directory.file("suite"), database: try await TestPostgres.shared.makeDatabaseURL())
            let run = try await cli.run(["run", "--progress", "lines"])
            #expect(run.exitCode == 0, "\(run.stdout)\(run.stderr)")
            #expect(run.stdout.contains("4 scenarios, 4 passed, 0 failed"), "\(run.stdout)")
            #expect(
                !run.stdout.contains("flaky") && !run.stderr.contains("infrastructure"), "\(run.stdout)\(run.stderr)")
            let outcomes = try await queryRows(
                try #require(cli.environment["ORCHESTRATE_DATABASE_URL"]),
                "SELECT DISTINCT outcome FROM attempts WHERE state = 'finished'",
                as: String.self)
            #expect(outcomes == ["passed"], "\(outcomes)")
        }
    }

    @Test(
        "a slot whose HOME holds what cannot be removed (a mount) is retired: its attempt runs elsewhere, no retry spent, nothing blamed",
        .enabled(
            if: geteuid() == 0 || ProcessInfo.processInfo.environment["CI"] == "true",
            "mounting needs root, which CI has"))
    func unremovable() async throws {
        try await TemporaryDirectory.with { directory in
            let detach: Int32 = 2  // MNT_DETACH
            defer {
                // Whatever the test mounted under its folder goes, whatever the outcome.
                let mounts = (try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8)) ?? ""
                for line in mounts.split(separator: "\n") {
                    let point = line.split(separator: " ").dropFirst().first.map(String.init) ?? ""
                    if point.hasPrefix(directory.path) { umount2(point, detach) }
                }
            }
            let innocents = (1...8).map { "    - { id: innocent\($0) }" }.joined(separator: "\n")
            try directory.write(
                "suite/orchestrate.yml",
                """
                workers: 2
                retries: 0
                suite:
                  command: "sleep 0.3"
                  scenarios:
                    - { id: mounts, command: 'mkdir "$HOME/stuck" && mount -t tmpfs orchestrate-test "$HOME/stuck"' }
                \(innocents)
                """)
            let cli = OrchestrateCLI(
                directory: directory.file("suite"), database: try await TestPostgres.shared.makeDatabaseURL())
            let run = try await cli.run(["run", "--progress", "lines"])
            #expect(run.exitCode == 0, "\(run.stdout)\(run.stderr)")
            #expect(run.stdout.contains("9 scenarios, 9 passed, 0 failed"), "\(run.stdout)")
            #expect(run.stderr.contains("stopped: its folders cannot be emptied for the next attempt"), "\(run.stderr)")
            let rows = try await queryRows(
                try #require(cli.environment["ORCHESTRATE_DATABASE_URL"]),
                "SELECT outcome, attempt FROM attempts WHERE state = 'finished'",
                as: (String, Int32).self)
            #expect(
                rows.count == 9 && rows.allSatisfy { $0.0 == "passed" && $0.1 == 1 },
                "no retry spent, nothing failed: \(rows)")
        }
    }
}
