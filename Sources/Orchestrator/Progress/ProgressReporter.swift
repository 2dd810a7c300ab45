import Coordinator
import Foundation
import OrchestrateModel
import Store
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Shows a run's progress on stderr: a live block on a terminal (done/total, each worker's scenario,
/// failures so far, ETA), plain lines otherwise (CI logs, pipes).
final class ProgressReporter: Sendable {
    enum Style: Sendable {
        case live
        case lines
        case silent

        /// Live on an interactive terminal, lines everywhere else (CI=true, pipes, TERM=dumb).
        static func automatic(environment: [String: String] = ProcessInfo.processInfo.environment) -> Style {
            let ci = ["true", "1"].contains(environment["CI"]?.lowercased() ?? "")
            return isatty(STDERR_FILENO) == 1 && environment["TERM"] != "dumb" && !ci ? .live : .lines
        }
    }

    private struct State {
        var progress: RunProgress
        var drawnLines = 0
        var ports: [Int: Int] = [:]
        /// Every host's part, when others work the run too: one line, and when it was last printed (lines style).
        var hosts = ""
        var hostNames: [String] = []
        var hostsPrinted: ContinuousClock.Instant?
    }

    private let style: Style
    private let workers: Int
    private let console: Console
    private let state: Mutex<State>
    private let clock = ContinuousClock()

    init(style: Style, expected: [String: Int64?], workers: Int, console: Console) {
        self.style = style
        self.workers = workers
        self.console = console
        self.state = Mutex(State(progress: RunProgress(expected: expected, workers: workers)))
    }

    func handle(_ event: CoordinatorEvent) {
        let now = clock.now
        if case .silent = style {
            state.withLock { $0.progress.apply(event, at: now) }
            return
        }
        let line: String? = state.withLock { state in
            state.progress.apply(event, at: now)
            switch event {
            case .slotReady(let slot, let port):
                state.ports[slot] = port
                return nil
            case .attemptFinished(let slot, let attempt, let result, let ack):
                return describe(attempt, result, ack, slot: slot, progress: state.progress)
            case .leasesReclaimed(let count):
                return "requeued \(count) attempt(s) of workers that died"
            case .attemptLost(let slot, let attempt, let requeued):
                return "worker \(slot)'s supervisor process died running \(attempt.scenario.id); "
                    + (requeued
                        ? "it goes back to the queue (no retry spent), and the worker gets a new supervisor"
                        : "that happened to it \(SlotStateMachine.maximumLosses) times: recorded as an infrastructure error")
            case .slotRetired(let slot, let reason):
                return "worker \(slot) stopped: \(reason); the other workers go on"
            case .leaseLost(let slot):
                return
                    "worker \(slot) lost its lease while this host could not reach the run queue: its attempt runs elsewhere, ended here"
            case .attemptStarted, .attemptReleased, .queueRound:
                return nil
            }
        }
        switch style {
        case .silent: break
        case .lines: if let line { console.note(line) }
        case .live: redraw(message: line)
        }
    }

    /// Every host's part in the run: a line of the live block; in lines style a line when a host joined, and when the
    /// counts changed at most every 10 s.
    func hosts(_ shares: [HostShare]) {
        let now = clock.now
        let text =
            "hosts: "
            + shares.map { "\($0.host) \($0.running)/\($0.slots) busy \($0.finished) done" }.joined(separator: " · ")
        let line = state.withLock { state -> String? in
            guard text != state.hosts else { return nil }
            state.hosts = text
            let names = shares.map(\.host)
            let joined = names != state.hostNames
            state.hostNames = names
            if !joined, let last = state.hostsPrinted, now - last < .seconds(10) { return nil }
            state.hostsPrinted = now
            return text
        }
        if case .lines = style, let line { console.note(line) }
    }

    /// Redraws the live block (called by a ticker, so running times advance).
    func tick() {
        if case .live = style { redraw(message: nil) }
    }

    /// Removes the live block before the summary is printed.
    func finish() {
        guard case .live = style else { return }
        let erase = state.withLock { state -> String in
            defer { state.drawnLines = 0 }
            return state.drawnLines > 0 ? "\u{1B}[\(state.drawnLines)F\u{1B}[J" : ""
        }
        write(erase)
    }

    private func describe(
        _ attempt: ClaimedAttempt, _ result: AttemptResult, _ ack: CompletionAck, slot: Int, progress: RunProgress
    ) -> String {
        // The count moves only on the line that settles a scenario: an attempt retried, or a compare run's lane with
        // the other lane still to run, leaves its place blank rather than say the same count again.
        let count =
            ack.settled == nil
            ? String(repeating: " ", count: 2 * String(progress.total).count + 3)
            : "[\(String(progress.settled).leftPadded(to: String(progress.total).count))/\(progress.total)]"
        let seconds = String(format: "%.1fs", Double(result.durationMilliseconds) / 1000)
        let lane = attempt.lane.map { " (\($0.rawValue))" } ?? ""
        var text =
            "\(count) \(result.outcome.rawValue.padded(to: 9)) \(attempt.scenario.id)\(lane)  \(seconds)  worker \(slot)"
        if attempt.attempt > 1 { text += "  attempt \(attempt.attempt)" }
        switch result.outcome {
        case .failed:
            // A test its runner reported failed is at its failure's place; a process that failed says its status.
            if let place = RunReport.ScenarioEntry.leadingPlace(result.error ?? "") {
                text += "  at \(place.file)\(place.line.map { ":\($0)" } ?? "")"
            } else if let code = result.exitCode {
                text += "  exit \(code)"
            }
        case .crashed: text += "  signal \(result.signal ?? 0)"
        case .infrastructureError: text += "  \(result.error ?? "")"
        case .passed, .timedOut: break
        }
        if ack.retryQueued { text += "  → retrying" }
        if ack.settled == .flaky { text += "  (flaky: passed on retry)" }
        return text
    }

    private func redraw(message: String?) {
        let now = clock.now
        let text = state.withLock { state -> String in
            var output = state.drawnLines > 0 ? "\u{1B}[\(state.drawnLines)F\u{1B}[J" : ""
            // What the block shows came from outside (ids, host names, errors): escaped, so that only the erase above
            // moves the cursor.
            if let message { output += TerminalText.escaped(message) + "\n" }
            let progress = state.progress
            var lines: [String] = []
            var header = "orchestrate  \(progress.settled)/\(progress.total) done"
            header += "  \(progress.failed) failed  \(progress.flaky) flaky"
            if let eta = progress.estimatedRemaining(at: now) { header += "  ETA \(format(eta))" }
            lines.append(header)
            if !state.hosts.isEmpty { lines.append("  \(state.hosts)") }
            for slot in 1...max(workers, 1) {
                if let running = progress.running[slot] {
                    let elapsed = format(now - running.startedAt)
                    let retry = running.attempt > 1 ? " (attempt \(running.attempt))" : ""
                    lines.append("  w\(slot)  \(running.scenarioID)\(retry)  \(elapsed)")
                } else {
                    lines.append("  w\(slot)  idle")
                }
            }
            state.drawnLines = lines.count
            return output + TerminalText.escaped(lines.joined(separator: "\n")) + "\n"
        }
        write(text)
    }

    private func format(_ duration: Duration) -> String {
        let total = Int(duration.components.seconds)
        return total >= 3600
            ? String(format: "%d:%02d:%02d", total / 3600, total / 60 % 60, total % 60)
            : String(format: "%d:%02d", total / 60, total % 60)
    }

    private func write(_ text: String) {
        guard !text.isEmpty else { return }
        console.raw(text)
    }
}

extension String {
    func padded(to width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
