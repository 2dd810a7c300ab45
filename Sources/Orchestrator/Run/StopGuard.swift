import Foundation
import Store
import Synchronization
import UnixSignals

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What SIGINT and SIGTERM do to `run` and `agent`, for the whole life of the process — armed by the command line, not
/// by in-process callers. While the slots work, the first one stops the run gracefully (its attempts go back to the
/// queue: the run's own handling). The process ends at once, with 130, when that stop has not ended within its patience
/// (it waits on a database that does not answer, say), when a second signal comes, or when a signal comes while no slot
/// works (planning, judging, writing reports) — saying how to take up the run it leaves, if it leaves one.
package enum StopGuard {
    private struct State {
        var armed = false
        var patience = Duration.seconds(40)
        var runID: UUID?
        var joined = false
        var executing = false
        var signals = 0
    }

    private static let state = Mutex(State())

    /// Watches SIGINT and SIGTERM from now on. `patience`: how long a graceful stop may take; by default
    /// ORCHESTRATE_CONNECT_TIMEOUT (writing the network log and marking the run interrupted wait that long for a
    /// database that does not answer) and 15 s for the slots' grace and giving back their attempts.
    package static func arm(patience: Duration = Database.defaultConnectTimeout + .seconds(15)) {
        let first = state.withLock { state -> Bool in
            defer {
                state.armed = true
                state.patience = patience
            }
            return !state.armed
        }
        guard first else { return }
        Task.detached {
            for await _ in await UnixSignalsSequence(trapping: .sigint, .sigterm) { received() }
        }
    }

    /// The run this process works, until it is settled (`nil`).
    static func working(on runID: UUID?, joined: Bool) {
        state.withLock { state in
            state.runID = runID
            state.joined = joined
        }
    }

    /// Whether the slots work now (a first signal stops them gracefully).
    static func executing(_ executing: Bool) {
        state.withLock { $0.executing = executing }
    }

    private static func received() {
        let (graceful, patience) = state.withLock { state -> (Bool, Duration) in
            state.signals += 1
            return (state.armed && state.executing && state.signals == 1, state.patience)
        }
        guard graceful else { stopNow() }
        Task.detached {
            try? await Task.sleep(for: patience)
            stopNow(after: patience)
        }
    }

    /// Ends the process with 130 (its slots' supervisors take their commands with them), after a line that says how to
    /// take the run up again.
    private static func stopNow(after patience: Duration? = nil) -> Never {
        let (runID, joined) = state.withLock { ($0.runID, $0.joined) }
        var line =
            patience.map { "orchestrate stopped at once: its stop did not end within \($0.components.seconds) s" }
            ?? "orchestrate stopped at once"
        if let runID { line += "; " + RunError.howToTakeUp(runID, joined: joined) }
        Console.detached.note(line)
        StandardStreams.flush(within: .seconds(2))
        _exit(ExitStatus.interrupted)
    }
}
