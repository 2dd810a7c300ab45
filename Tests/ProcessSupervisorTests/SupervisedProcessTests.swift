import Foundation
import OrchestrateTesting
import ProcessSupervisor
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("Supervised processes")
struct SupervisedProcessTests {
    let directory = "/tmp/orch-ps-\(UUID().uuidString.prefix(8))"

    init() throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    func shell(_ script: String, timeout: Duration? = nil, grace: Duration = .seconds(1)) -> SupervisedCommand {
        var command = SupervisedCommand.shell(script, environment: ["PATH": "/usr/bin:/bin"])
        command.stdoutPath = "\(directory)/out"
        command.stderrPath = "\(directory)/err"
        command.timeout = timeout
        command.grace = grace
        return command
    }

    func read(_ name: String) -> String { (try? String(contentsOfFile: "\(directory)/\(name)", encoding: .utf8)) ?? "" }

    func alive(_ pid: Int32) -> Bool { kill(pid, 0) == 0 || errno != ESRCH }

    @Test("exit status, signal and output are reported as they happened")
    func outcomes() async throws {
        #expect(try await SupervisedProcess.run(shell("echo out; echo err >&2; exit 0")).reason == .exited(0))
        #expect(read("out") == "out\n")
        #expect(read("err") == "err\n")
        #expect(try await SupervisedProcess.run(shell("exit 7")).reason == .exited(7))
        #expect(try await SupervisedProcess.run(shell("kill -SEGV $$")).reason == .signaled(SIGSEGV))
    }

    @Test("the environment is exactly the command's: shared entries, its own overriding them by name, no duplicates")
    func environment() async throws {
        var command = shell(#"env | grep -E '^(A|B|C|PATH)=' | sort"#)
        command.sharedEnvironment = SharedEnvironment(["A": "shared a", "B": "shared b", "PATH": "/nowhere"])
        command.environment["B"] = "own b"
        command.environment["C"] = "tab\there, quote \" and = sign"
        #expect(try await SupervisedProcess.run(command).reason == .exited(0))
        #expect(read("out") == "A=shared a\nB=own b\nC=tab\there, quote \" and = sign\nPATH=/usr/bin:/bin\n")
        // Without overrides the shared entries go as they are; a string ends at a NUL, as in C.
        var plain = shell(#"printf '%s|%s' "$A" "$Z""#)
        plain.sharedEnvironment = SharedEnvironment(["A": "only shared"])
        plain.environment["Z"] = "before\0after"
        #expect(try await SupervisedProcess.run(plain).reason == .exited(0))
        #expect(read("out") == "only shared|before")
    }

    @Test("a command that cannot be executed is a spawn failure, not a crash")
    func spawnFailure() async throws {
        var command = shell("true")
        command.executable = "/nonexistent/program"
        #expect(try await SupervisedProcess.run(command).reason == .spawnFailed(errno: ENOENT))
        var missingFolder = shell("true")
        missingFolder.workingDirectory = "/nonexistent/folder"
        #expect(try await SupervisedProcess.run(missingFolder).reason == .spawnFailed(errno: ENOENT))
    }

    @Test("a timed-out command that spawned grandchildren leaves no process behind", .timeLimit(.minutes(1)))
    func timeoutKillsTree() async throws {
        // Grandchildren in the background, one of which ignores SIGTERM and must get SIGKILL.
        let script = """
            sleep 300 & echo $! > \(directory)/pids
            (trap '' TERM; sleep 300) & echo $! >> \(directory)/pids
            sh -c 'sleep 300' & echo $! >> \(directory)/pids
            wait
            """
        let termination = try await SupervisedProcess.run(
            shell(script, timeout: .milliseconds(500), grace: .milliseconds(500)))
        guard case .timedOut = termination.reason else {
            Issue.record("expected a timeout, got \(termination.reason)")
            return
        }
        let pids = read("pids").split(separator: "\n").compactMap { Int32($0) }
        #expect(pids.count == 3)
        for pid in pids { #expect(!alive(pid), "process \(pid) outlived the timeout") }
        #expect(!alive(termination.pid))
    }

    @Test("background processes end with the leader that left them behind")
    func leftoversEnd() async throws {
        let termination = try await SupervisedProcess.run(shell("sleep 300 & echo $! > \(directory)/pids; exit 0"))
        #expect(termination.reason == .exited(0))
        let pid = try #require(Int32(read("pids").trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(!alive(pid))
    }

    @Test("terminate ends the group and says so")
    func terminate() async throws {
        let process = try SupervisedProcess.launch(shell("touch \(directory)/running; sleep 300"))
        #expect(await eventually { FileManager.default.fileExists(atPath: "\(directory)/running") })
        process.terminate()
        let termination = await process.wait()
        guard case .terminated = termination.reason else {
            Issue.record("expected terminated, got \(termination.reason)")
            return
        }
        #expect(!alive(termination.pid))
    }

    @Test("cancelling the waiting task ends the process group")
    func cancellation() async throws {
        let process = try SupervisedProcess.launch(shell("touch \(directory)/running; sleep 300"))
        let pid = try #require(process.pid)
        let waiting = Task { await process.wait() }
        #expect(await eventually { FileManager.default.fileExists(atPath: "\(directory)/running") })
        waiting.cancel()
        _ = await waiting.value
        #expect(!alive(pid))
    }

    @Test("output beyond the capture bound keeps its head and tail and says how much was dropped")
    func boundedCapture() async throws {
        var command = shell("echo FIRST; head -c 1000000 /dev/zero | tr '\\\\0' x; echo; echo LAST")
        command.captureHeadBytes = 1024
        command.captureTailBytes = 1024
        let termination = try await SupervisedProcess.run(command)
        #expect(termination.reason == .exited(0))
        #expect(termination.stdoutBytes > 1_000_000)
        let output = read("out")
        #expect(output.hasPrefix("FIRST\n"))
        #expect(output.hasSuffix("LAST\n"))
        #expect(output.contains("bytes omitted]"))
        #expect(output.utf8.count < 2200)
    }

    @Test(
        "a process running as another user is possible for root (PostgreSQL refuses root)",
        .enabled(if: geteuid() == 0, "only root may run a command as another user"))
    func otherUser() async throws {
        // getpwnam's answer lives in a static buffer another test may reuse: copy the ids at once.
        let entry = try #require(getpwnam("nobody"), "no user nobody")
        let (uid, gid) = (entry.pointee.pw_uid, entry.pointee.pw_gid)
        var command = shell("id -u")
        command.user = (uid, gid)
        #expect(try await SupervisedProcess.run(command).reason == .exited(0))
        #expect(read("out").trimmingCharacters(in: .whitespacesAndNewlines) == "\(uid)")
    }
}

@Suite("A supervisor that dies")
struct SupervisorDeathTests {
    @Test(
        "a supervisor killed outright is noticed at once, takes its command's whole group with it, and takes no new command"
    )
    func killedSupervisor() async throws {
        try await TemporaryDirectory.with { directory in
            let supervisor = try Supervisor()
            defer { supervisor.shutdown() }
            var command = SupervisedCommand.shell(
                "sleep 300 & echo $! > \(directory.file("child")); echo $PPID > \(directory.file("supervisor")); wait",
                environment: ["PATH": "/usr/bin:/bin"]
            )
            command.timeout = .seconds(120)
            let process = try supervisor.launch(command)
            let leader = try #require(process.pid)
            let supervisorPID = try #require(
                await eventuallyValue {
                    Int32(directory.read("supervisor").trimmingCharacters(in: .whitespacesAndNewlines))
                })
            let child = try #require(
                await eventuallyValue { Int32(directory.read("child").trimmingCharacters(in: .whitespacesAndNewlines)) }
            )
            kill(supervisorPID, SIGKILL)
            let termination = await process.wait()
            #expect(termination.reason == .supervisorDied)
            #expect(
                await eventually { !processExists(leader) && !processExists(child) },
                "the command outlived its supervisor")
            #expect(throws: SupervisorError.self) {
                try supervisor.launch(SupervisedCommand.shell("true", environment: [:]))
            }
        }
    }
}
