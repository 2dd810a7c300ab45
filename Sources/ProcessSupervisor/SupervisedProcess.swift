import CSupervisor
import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A running ``SupervisedCommand``.
///
/// ```swift
/// let termination = try await SupervisedProcess.run(.shell("make check", environment: env))
/// ```
/// Cancelling the waiting task ends the command's whole process group (SIGTERM, then SIGKILL).
package final class SupervisedProcess: Sendable {
    /// The leader's pid, which is also the process group id; `nil` when nothing started.
    package let pid: Int32?
    private let supervisor: Supervisor
    private let ownsSupervisor: Bool
    /// Set when the command never started: the wait returns it at once.
    private let failure: Termination?

    init(supervisor: Supervisor, owns: Bool, first: orch_report) {
        self.supervisor = supervisor
        self.ownsSupervisor = owns
        if first.kind == Int32(ORCH_STARTED) {
            pid = first.pid
            failure = nil
        } else {
            pid = nil
            failure = Termination(reason: .spawnFailed(errno: first.value), pid: first.pid)
        }
    }

    /// Starts `command` under a supervisor of its own, which exits with the command.
    /// Throws ``SupervisorError`` when no supervisor can be started; a command that cannot be
    /// executed starts and ends with ``Termination/Reason/spawnFailed(errno:)``.
    package static func launch(_ command: SupervisedCommand) throws(SupervisorError) -> SupervisedProcess {
        let supervisor = try Supervisor()
        let process = try supervisor.launch(command, owns: true)
        supervisor.finishAfterCurrent()
        return process
    }

    /// Runs `command` to its end.
    package static func run(_ command: SupervisedCommand) async throws(SupervisorError) -> Termination {
        await (try launch(command)).wait()
    }

    /// Waits for the end of the command. Cancelling the waiting task ends the process group.
    package func wait() async -> Termination {
        if let failure {
            if ownsSupervisor { supervisor.shutdown() }
            return failure
        }
        let termination = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Termination, Never>) in
                let supervisor = self.supervisor
                // Waiting blocks: it happens on the supervisor's own serial queue (an overcommitting
                // dispatch queue, whose thread is reused), never on the cooperative pool.
                supervisor.waiting.async {
                    continuation.resume(returning: supervisor.blockingWait())
                }
            }
        } onCancel: {
            self.terminate()
        }
        if ownsSupervisor { supervisor.shutdown() }
        return termination
    }

    /// Ends the command's process group: SIGTERM now, SIGKILL after the grace period.
    package func terminate() {
        supervisor.terminateCurrent()
    }
}

/// A supervisor process that runs commands one after another (one at a time), so that a worker slot
/// pays for forking the coordinator once, not per attempt.
package final class Supervisor: Sendable {
    private let handle: Mutex<orch_supervisor>
    private let running = Atomic<Bool>(false)
    /// The running command's leader (its process group), 0 when none runs.
    private let leader = Atomic<Int32>(0)
    fileprivate let waiting = DispatchQueue(label: "orchestrate.supervisor.wait")

    /// Forks the supervisor process.
    package init() throws(SupervisorError) {
        ignoreSIGPIPEOnce
        var supervisor = orch_supervisor()
        let code = orch_supervisor_start(&supervisor)
        guard code == 0 else { throw SupervisorError(code: .launchFailed, errno: code, executable: "the supervisor") }
        handle = Mutex(supervisor)
    }

    deinit {
        shutdown()
    }

    /// Starts `command`; the previous one must have ended (its ``SupervisedProcess/wait()`` returned).
    package func launch(_ command: SupervisedCommand) throws(SupervisorError) -> SupervisedProcess {
        try launch(command, owns: false)
    }

    func launch(_ command: SupervisedCommand, owns: Bool) throws(SupervisorError) -> SupervisedProcess {
        // The strings go packed, as the supervisor reads them (supervisor.h): no C string per entry.
        var packed = PackedStrings()
        packed.add(command.executable)
        packed.add(command.executable)  // argv[0]
        for argument in command.arguments { packed.add(argument) }
        for (name, value) in command.environment { packed.add(name, value) }
        var environmentCount = command.environment.count
        if let shared = command.sharedEnvironment {
            environmentCount += packed.add(shared, except: command.environment)
        }
        for path in [command.workingDirectory, command.stdoutPath, command.stderrPath] {
            if let path { packed.add(path) }
        }
        let strings = packed.bytes
        var supervisor = handle.withLock { $0 }
        var first = orch_report()
        let code: Int32 = strings.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { characters in
                var request = orch_spawn_request()
                request.strings = characters.baseAddress
                request.length = UInt32(clamping: characters.count)
                request.argc = UInt32(1 + command.arguments.count)
                request.envc = UInt32(environmentCount)
                request.has_working_directory = command.workingDirectory == nil ? 0 : 1
                request.has_stdout_path = command.stdoutPath == nil ? 0 : 1
                request.has_stderr_path = command.stderrPath == nil ? 0 : 1
                request.capture_head_bytes = Int64(command.captureHeadBytes)
                request.capture_tail_bytes = Int64(command.captureTailBytes)
                request.timeout_ms = command.timeout.map { Int64($0.milliseconds) } ?? 0
                request.grace_ms = Int64(command.grace.milliseconds)
                request.uid = command.user.map { Int32(bitPattern: $0.uid) } ?? -1
                request.gid = command.user.map { Int32(bitPattern: $0.gid) } ?? -1
                return orch_supervisor_submit(&supervisor, &request, &first)
            }
        }
        guard code == 0 else {
            // The request could not be written, or no report came back: the supervisor is gone.
            throw SupervisorError(
                code: code == EPIPE ? .supervisorDied : .launchFailed, errno: code, executable: command.executable)
        }
        running.store(first.kind == Int32(ORCH_STARTED), ordering: .releasing)
        leader.store(first.kind == Int32(ORCH_STARTED) ? first.pid : 0, ordering: .releasing)
        return SupervisedProcess(supervisor: self, owns: owns, first: first)
    }

    /// Blocks until the running command's final report.
    fileprivate func blockingWait() -> Termination {
        var supervisor = handle.withLock { $0 }
        var report = orch_report()
        let died = orch_supervisor_wait(&supervisor, &report) != 0
        running.store(false, ordering: .releasing)
        let group = leader.exchange(0, ordering: .acquiringAndReleasing)
        if died {
            // The leader died with its supervisor (PR_SET_PDEATHSIG); what it started in its group ends now.
            if group > 0 { kill(-group, SIGKILL) }
            return Termination(reason: .supervisorDied, pid: group)
        }
        let reason: Termination.Reason
        switch report.kind {
        case Int32(ORCH_EXITED): reason = .exited(report.value)
        case Int32(ORCH_SIGNALED): reason = .signaled(report.value)
        case Int32(ORCH_TIMED_OUT): reason = .timedOut(status: report.value)
        case Int32(ORCH_TERMINATED): reason = .terminated(status: report.value)
        default: reason = .spawnFailed(errno: report.value)
        }
        return Termination(
            reason: reason, pid: report.pid, stdoutBytes: report.stdout_bytes, stderrBytes: report.stderr_bytes)
    }

    fileprivate func terminateCurrent() {
        handle.withLock { supervisor in
            guard running.load(ordering: .acquiring) else { return }
            orch_supervisor_terminate(&supervisor)
        }
    }

    /// Lets the supervisor exit once the running command has ended.
    fileprivate func finishAfterCurrent() {
        handle.withLock { supervisor in
            if supervisor.request_fd >= 0 { close(supervisor.request_fd) }
            supervisor.request_fd = -1
        }
    }

    /// Lets the supervisor exit and reaps it. Waits for a running command to end.
    package func shutdown() {
        handle.withLock { supervisor in
            guard supervisor.pid > 0 else { return }
            orch_supervisor_stop(&supervisor)
        }
    }
}

private let ignoreSIGPIPEOnce: Void = {
    // Writing to a supervisor that has just exited must not kill the coordinator.
    signal(SIGPIPE, SIG_IGN)
}()

extension Duration {
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}

/// Environment entries that many commands share, packed once (``SupervisedCommand/sharedEnvironment``).
package struct SharedEnvironment: Sendable {
    let entries: [String: String]
    fileprivate let packed: PackedStrings

    package init(_ entries: [String: String]) {
        self.entries = entries
        var packed = PackedStrings()
        for (name, value) in entries { packed.add(name, value) }
        self.packed = packed
    }
}

/// NUL-terminated strings one after another. A string ends at its first NUL, as a C string would.
private struct PackedStrings: Sendable {
    var bytes: [UInt8] = []

    init() {
        bytes.reserveCapacity(4096)
    }

    mutating func add(_ string: String) {
        append(string)
        bytes.append(0)
    }

    /// The entries of `shared` whose names `overridden` does not have; returns how many.
    mutating func add(_ shared: SharedEnvironment, except overridden: [String: String]) -> Int {
        guard overridden.keys.contains(where: { shared.entries[$0] != nil }) else {
            bytes.append(contentsOf: shared.packed.bytes)
            return shared.entries.count
        }
        var count = 0
        for (name, value) in shared.entries where overridden[name] == nil {
            add(name, value)
            count += 1
        }
        return count
    }

    /// `NAME=value`.
    mutating func add(_ name: String, _ value: String) {
        append(name)
        bytes.append(UInt8(ascii: "="))
        append(value)
        bytes.append(0)
    }

    private mutating func append(_ string: String) {
        var string = string
        string.withUTF8 { utf8 in
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[..<(utf8.firstIndex(of: 0) ?? utf8.endIndex)]))
        }
    }
}
