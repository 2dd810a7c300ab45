/// How a supervised command ended.
package struct Termination: Sendable, Equatable {
    package enum Reason: Sendable, Equatable {
        /// The leader exited with this status.
        case exited(Int32)
        /// The leader was killed by this signal (not by the supervisor).
        case signaled(Int32)
        /// The time limit ended the group; `status` is how the leader ended (exit status or 128+signal).
        case timedOut(status: Int32)
        /// Ended on request (``SupervisedProcess/terminate()``, e.g. Ctrl-C).
        case terminated(status: Int32)
        /// Nothing ran: exec or set-up failed with this errno.
        case spawnFailed(errno: Int32)
        /// The supervisor process died (killed) while the command ran; the command's process group was killed with it.
        case supervisorDied
    }

    package var reason: Reason
    /// The leader's pid, which is also its process group id.
    package var pid: Int32
    /// All bytes written to stdout, including those the bounded capture dropped.
    package var stdoutBytes: Int64
    package var stderrBytes: Int64

    package init(reason: Reason, pid: Int32, stdoutBytes: Int64 = 0, stderrBytes: Int64 = 0) {
        self.reason = reason
        self.pid = pid
        self.stdoutBytes = stdoutBytes
        self.stderrBytes = stderrBytes
    }
}
