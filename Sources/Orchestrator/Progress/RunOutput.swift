import Coordinator
import Store
import Synchronization

/// What a run says while it works and when it ends: progress and notes for people, then the summary. Injected into
/// ``RunOrchestration``, so that tests and other front ends see what a run says without a terminal.
package protocol RunOutput: Sendable {
    /// The run is planned: what is left to do (expected milliseconds, `nil` when never seen) and on how many slots.
    func started(expected: [String: Int64?], workers: Int)
    /// Something happened in a slot.
    func handle(_ event: CoordinatorEvent)
    /// Time passed (a live display redraws its clocks).
    func tick()
    /// The slots are done; the summary comes next.
    func finished()
    /// A line for people: resuming a run, quarantine changes.
    func note(_ line: String)
    /// The run's summary.
    func summary(_ text: String)
    /// Each host's part in a run other hosts work too, now.
    func hosts(_ shares: [HostShare])
}

extension RunOutput {
    package func hosts(_ shares: [HostShare]) {}
}

/// A run's output on a console: progress (live on a terminal, a line per attempt elsewhere, or none) and notes on
/// standard error, the summary on standard output.
package final class ConsoleRunOutput: RunOutput {
    private let style: ProgressReporter.Style
    private let console: Console
    private let reporter = Mutex<ProgressReporter?>(nil)

    package init(progress: RunOptions.ProgressChoice, console: Console = .standard) {
        switch progress {
        case .automatic: style = .automatic()
        case .live: style = .live
        case .lines: style = .lines
        case .none: style = .silent
        }
        self.console = console
    }

    package func started(expected: [String: Int64?], workers: Int) {
        let reporter = ProgressReporter(style: style, expected: expected, workers: workers, console: console)
        self.reporter.withLock { $0 = reporter }
    }

    package func handle(_ event: CoordinatorEvent) { reporter.withLock { $0 }?.handle(event) }

    package func tick() { reporter.withLock { $0 }?.tick() }

    package func finished() { reporter.withLock { $0 }?.finish() }

    package func note(_ line: String) { console.note(line) }

    package func summary(_ text: String) { console.line(text) }

    package func hosts(_ shares: [HostShare]) { reporter.withLock { $0 }?.hosts(shares) }
}
