import Foundation
import OrchestrateModel
import OrchestrateTesting
import ProcessSupervisor
import Testing

/// `scripts/test-watchdog.py`, which `make test` (and so CI) runs the suite under: a stuck test ends the run with a
/// clear failure naming it, never a hang; a run that exits 0 without evidence fails.
@Suite("The test watchdog: a stuck suite fails naming its stuck tests", .timeLimit(.minutes(2)))
struct TestWatchdogTests {
    static let watchdog = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
        .appendingPathComponent("scripts/test-watchdog.py").path

    /// A stand-in for `swift test`: writes the event stream it is told to (`--event-stream-output-path`) for the test
    /// `a` (and `b`), then does what `MODE` says.
    static let runner = #"""
        import json, sys, time, os
        path = sys.argv[sys.argv.index("--event-stream-output-path") + 1]
        mode = os.environ["MODE"]
        def write(record):
            with open(path, "a") as stream:
                stream.write(json.dumps(record) + "\n")
        if mode != "none":
            for test in ["a", "b"]:
                write({"kind": "test", "version": 0, "payload": {"id": test, "kind": "function", "name": test, "displayName": "test " + test}})
                write({"kind": "event", "version": 0, "payload": {"kind": "testStarted", "testID": test}})
            write({"kind": "event", "version": 0, "payload": {"kind": "testEnded", "testID": "a"}})
        if mode == "stuck":
            time.sleep(600)
        if mode == "passes":
            write({"kind": "event", "version": 0, "payload": {"kind": "testEnded", "testID": "b"}})
        sys.exit(0)
        """#

    static func watch(
        _ mode: String, in directory: TemporaryDirectory
    ) async throws -> (status: Termination.Reason, output: String) {
        try directory.write("runner.py", Self.runner)
        var command = SupervisedCommand(
            executable: "/usr/bin/env",
            arguments: ["python3", Self.watchdog, "--stuck-after", "3", "--", "python3", directory.file("runner.py")],
            environment: ProcessInfo.processInfo.environment.merging(["MODE": mode]) { $1 },
            workingDirectory: directory.path,
            stdoutPath: directory.file("\(mode).stdout"), stderrPath: directory.file("\(mode).stderr"))
        command.timeout = .seconds(60)
        let termination = try await SupervisedProcess.run(command)
        return (termination.reason, directory.read("\(mode).stdout") + directory.read("\(mode).stderr"))
    }

    @Test(
        "no test ends for --stuck-after: exit 1, naming the test started and not ended, within seconds, the runner ended"
    )
    func stuck() async throws {
        try await TemporaryDirectory.with { directory in
            let started = ContinuousClock.now
            let (status, output) = try await Self.watch("stuck", in: directory)
            #expect(status == .exited(1), "\(output)")
            #expect(
                output.contains("no test has ended for 3 s") && output.contains("not ended: test b  (b)"), "\(output)")
            #expect(!output.contains("test a  (a)"), "a ended: \(output)")
            #expect(ContinuousClock.now - started < .seconds(30))
        }
    }

    @Test("exit 0 with a test that never ended, or with no test at all, is a failure; with every test ended, a pass")
    func evidence() async throws {
        try await TemporaryDirectory.with { directory in
            let unended = try await Self.watch("unended", in: directory)
            #expect(
                unended.status == .exited(1) && unended.output.contains("these tests never ended"), "\(unended.output)")
            let none = try await Self.watch("none", in: directory)
            #expect(none.status == .exited(1) && none.output.contains("without running a test"), "\(none.output)")
            let passes = try await Self.watch("passes", in: directory)
            #expect(passes.status == .exited(0), "\(passes.output)")
        }
    }
}
