import CSupervisor
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
/// Cancelling the calling task ends the command's whole process group (SIGTERM, then SIGKILL).
public final class SupervisedProcess: Sendable {
    /// The leader's pid, which is also the process group id; `nil` when nothing started.
    public let pid: Int32?
    private let handle: Mutex<orch_spawn_handle>
    private let finished = Atomic<Bool>(false)

    private init(handle: orch_spawn_handle) {
        self.pid = handle.leader_pid > 0 ? handle.leader_pid : nil
        self.handle = Mutex(handle)
    }

    /// Starts `command`. Throws ``SupervisorError`` when the supervisor itself cannot start;
    /// a command that cannot be executed starts and ends with ``Termination/Reason/spawnFailed(errno:)``.
    public static func launch(_ command: SupervisedCommand) throws(SupervisorError) -> SupervisedProcess {
        ignoreSIGPIPEOnce
        let argv = [command.executable] + command.arguments
        let envp = command.environment.map { "\($0.key)=\($0.value)" }.sorted()
        var handle = orch_spawn_handle()
        let code: Int32 = withCStrings(argv) { argvPointer in
            withCStrings(envp) { envpPointer in
                withOptionalCString(command.workingDirectory) { cwd in
                    withOptionalCString(command.stdoutPath) { stdoutPath in
                        withOptionalCString(command.stderrPath) { stderrPath in
                            command.executable.withCString { executable in
                                var request = orch_spawn_request()
                                request.executable = executable
                                request.argv = argvPointer
                                request.envp = envpPointer
                                request.working_directory = cwd
                                request.stdout_path = stdoutPath
                                request.stderr_path = stderrPath
                                request.capture_head_bytes = Int64(command.captureHeadBytes)
                                request.capture_tail_bytes = Int64(command.captureTailBytes)
                                request.timeout_ms = command.timeout.map { Int64($0.milliseconds) } ?? 0
                                request.grace_ms = Int64(command.grace.milliseconds)
                                request.uid = command.user.map { Int32(bitPattern: $0.uid) } ?? -1
                                request.gid = command.user.map { Int32(bitPattern: $0.gid) } ?? -1
                                return orch_spawn(&request, &handle)
                            }
                        }
                    }
                }
            }
        }
        guard code == 0 else {
            throw SupervisorError(code: .launchFailed, errno: code, executable: command.executable)
        }
        return SupervisedProcess(handle: handle)
    }

    /// Runs `command` to its end.
    public static func run(_ command: SupervisedCommand) async throws(SupervisorError) -> Termination {
        let process = try launch(command)
        return await process.wait()
    }

    /// Waits for the end of the command. Cancelling the waiting task ends the process group.
    public func wait() async -> Termination {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Termination, Never>) in
                let box = HandleBox(process: self)
                spawnBlockingThread {
                    continuation.resume(returning: box.process.blockingWait())
                }
            }
        } onCancel: {
            self.terminate()
        }
    }

    /// Ends the command's process group: SIGTERM now, SIGKILL after the grace period.
    public func terminate() {
        handle.withLock { handle in
            guard !finished.load(ordering: .acquiring) else { return }
            orch_terminate(&handle)
        }
    }

    private func blockingWait() -> Termination {
        // The report fd is only read here, once; control writes happen under the lock.
        var copy = handle.withLock { $0 }
        var report = orch_report()
        _ = orch_wait(&copy, &report)
        handle.withLock { handle in
            finished.store(true, ordering: .releasing)
            handle.control_fd = -1
            handle.report_fd = -1
        }
        let reason: Termination.Reason
        switch report.kind {
        case Int32(ORCH_EXITED): reason = .exited(report.value)
        case Int32(ORCH_SIGNALED): reason = .signaled(report.value)
        case Int32(ORCH_TIMED_OUT): reason = .timedOut(status: report.value)
        case Int32(ORCH_TERMINATED): reason = .terminated(status: report.value)
        default: reason = .spawnFailed(errno: report.value)
        }
        return Termination(reason: reason, pid: report.pid, stdoutBytes: report.stdout_bytes, stderrBytes: report.stderr_bytes)
    }
}

private struct HandleBox: @unchecked Sendable {
    // Safe: SupervisedProcess is Sendable; the box only carries it into the waiting thread.
    let process: SupervisedProcess
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
