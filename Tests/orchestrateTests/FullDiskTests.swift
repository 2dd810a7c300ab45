import Foundation
import OrchestrateTesting
import ProcessSupervisor
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A disk that fills under the embedded PostgreSQL: the run ends with one line naming the disk, keeps what it finished,
/// and SIGINT ends it. docs/reliability.md names these tests.
@Suite(
    "A full disk", .timeLimit(.minutes(5)),
    .enabled(
        if: geteuid() == 0 || ProcessInfo.processInfo.environment["CI"] == "true",
        "a disk of its own (tmpfs) needs root, which CI has"))
struct FullDiskTests {
    /// A project on a 64 MiB disk of its own (the embedded cluster in it) whose 20 scenarios each post two distinct 1.5
    /// MB bodies, which the network log keeps: the disk fills mid-run. Each scenario notes its starts and ends outside
    /// the disk.
    static func withFullingDisk(_ body: (TemporaryDirectory, String, OrchestrateCLI) async throws -> Void) async throws
    {
        try await TemporaryDirectory.with { directory in
            let disk = directory.file("disk")
            try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
            #expect(
                mount("tmpfs", disk, "tmpfs", 0, "size=64m,mode=0755") == 0,
                "mount: \(String(cString: strerror(errno)))")
            defer { umount2(disk, 2) }  // MNT_DETACH
            let scenarios = (1...20).map { "    - { id: s\($0) }" }.joined(separator: "\n")
            try directory.write(
                "disk/suite/orchestrate.yml",
                """
                workers: 4
                suite:
                  command: >-
                    echo x >> \(directory.path)/starts-{id};
                    for i in 1 2 3; do head -c 1100000 /dev/urandom | base64 -w0 |
                    curl -s -o /dev/null -X POST --data-binary @- "$ORCHESTRATE_MOCK_URL/api.example/upload/{id}/$i"; done;
                    echo x >> \(directory.path)/ends-{id}
                  scenarios:
                \(scenarios)
                mock: { mode: mock }
                """)
            // The embedded cluster of the project, on the small disk.
            var cli = OrchestrateCLI(directory: "\(disk)/suite", database: nil)
            cli.environment["ORCHESTRATE_CONNECT_TIMEOUT"] = "5s"
            do {
                try await body(directory, disk, cli)
            } catch {
                _ = try? await cli.run(["db", "stop"], name: "stop")
                throw error
            }
            _ = try? await cli.run(["db", "stop"], name: "stop")
        }
    }

    @Test(
        "the run ends with exit 3 and one line naming the disk; what it finished is kept; after space is freed --resume runs nothing twice"
    )
    func fills() async throws {
        try await Self.withFullingDisk { directory, disk, cli in
            let started = ContinuousClock.now
            let run = try await cli.run(["run", "--progress", "lines"], name: "run")
            let took = ContinuousClock.now - started
            #expect(run.exitCode == 3, "\(run.stdout)\(run.stderr)")
            let errors = run.stderr.split(separator: "\n").filter { $0.hasPrefix("error:") }
            #expect(errors.count == 1, "\(run.stderr)")
            let error = String(errors.first ?? "")
            #expect(error.contains("the disk holding \(disk)/suite/.orchestrate/postgres is full"), "\(error)")
            #expect(took < .seconds(120), "ended after \(took)")
            let runID = try #require(
                error.components(separatedBy: "orchestrate run --resume ").last?.trimmingCharacters(in: .whitespaces))
            #expect(UUID(uuidString: runID) != nil, "\(error)")

            // Room again: the run is taken up where it stopped.
            #expect(mount("tmpfs", disk, "tmpfs", UInt(MS_REMOUNT), "size=1g,mode=0755") == 0)
            let resumed = try await cli.run(["run", "--resume", runID, "--progress", "none"], name: "resume")
            #expect(resumed.exitCode == 0, "\(resumed.stdout)\(resumed.stderr)")
            #expect(resumed.stdout.contains("20 scenarios, 20 passed, 0 failed"), "\(resumed.stdout)")
            // A scenario that ended was recorded then, or kept and recorded now: none ended twice (one cut off by the
            // stop starts again), unless the line said a result could not be kept.
            let twice = (1...20).filter { directory.read("ends-s\($0)").count > 2 }
            if !error.contains("could not be kept") {
                #expect(
                    twice.isEmpty,
                    "ran to their end twice: \(twice)\n\(run.stdout)\(run.stderr)\n\(resumed.stdout)\(resumed.stderr)")
            }
            if error.contains("kept for it") { #expect(resumed.stderr.contains("recorded "), "\(resumed.stderr)") }
        }
    }

    @Test("SIGINT ends a run whose database died of a full disk, with 130 and the line that says how to resume it")
    func interrupted() async throws {
        try await Self.withFullingDisk { directory, disk, cli in
            var cli = cli
            // Long enough that only the signal ends the run in time.
            cli.environment["ORCHESTRATE_CONNECT_TIMEOUT"] = "60s"
            let run = try cli.launch(["run", "--progress", "lines"], name: "run")
            let log = "\(disk)/suite/.orchestrate/postgres/orchestrate-server.log"
            // The server dies of the full disk (its WAL cannot be written), with the run under way.
            #expect(
                await eventually(timeout: .seconds(120)) {
                    ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("No space left on device")
                },
                "\(directory.read("disk/suite/run.stderr"))\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")"
            )
            let signalled = ContinuousClock.now
            if let pid = run.pid { kill(pid, SIGINT) }
            let ended = await eventually(timeout: .seconds(100)) { !processExists(run.pid ?? 0) }
            if !ended { run.terminate() }
            let result = cli.output(await run.wait(), name: "run")
            #expect(ended, "SIGINT did not end it")
            let took = ContinuousClock.now - signalled
            // The stop is cut short (the slots' grace and giving their attempts back, 25 s at most), the network log
            // gets 10 s, marking the run 5 s: less than the 60 s the queue would be waited for without the signal.
            #expect(took < .seconds(55), "ended \(took) after SIGINT: \(result.stderr)")
            #expect(result.exitCode == 130, "\(result.stderr)")
            #expect(result.stderr.contains("is left unfinished: orchestrate run --resume"), "\(result.stderr)")
        }
    }
}
