import Logging
import OrchestrateModel
import Synchronization

/// The run queue, asked again while the database is unavailable — for as long as the queue's
/// ``AttemptQueueClient/patience`` (ORCHESTRATE_CONNECT_TIMEOUT, 15 s) since it stopped answering; then the run gives
/// up with one line (exit 3). A try waits for at most half the patience (at least 5 s): a request for a pooled
/// connection waits without an error while the server is down, and one queued behind a connection that closes may not
/// be served at all — tried again, the queue is reached once the server is back. Half, not less: on a database serving
/// a thousand slots a round may take seconds, and a try given up on is a round sent again. The outage is said once, and
/// its end. A run being stopped gives back what it holds if the queue answers soon: it does not wait out the whole
/// patience.
package final class PatientQueue: Sendable {
    package let client: any AttemptQueueClient
    private let logger: Logger
    private let state = Mutex(State())

    private struct State {
        /// Since when the queue has not answered (`nil`: it answers), and why, as first said.
        var unreachableSince: ContinuousClock.Instant?
        var unreachableReason = ""
        var stopping = false
    }

    package init(_ client: any AttemptQueueClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Whether the queue does not answer now (an outage under way).
    package var unreachable: Bool { state.withLock { $0.unreachableSince != nil } }

    /// From now on a call waits at most ``Coordinator/stoppingPatience`` for a queue that does not answer.
    func stop() {
        state.withLock { $0.stopping = true }
    }

    /// `operation` on the queue, tried again while it fails, until the patience is spent. `onFailure` hears every
    /// failed try (a round whose answer was lost may have been committed).
    func call<T: Sendable>(
        _ what: String, onFailure: () -> Void = {},
        _ operation: @escaping @Sendable (any AttemptQueueClient) async throws -> T
    ) async throws -> T {
        let clock = ContinuousClock()
        let patience =
            state.withLock { $0.stopping } ? min(client.patience, Coordinator.stoppingPatience) : client.patience
        var delay = Duration.milliseconds(100)
        while true {
            try Task.checkCancellation()
            let tried = clock.now
            // While the queue does not answer, a try gets what is left of the patience, up to its share.
            let left = state.withLock { $0.unreachableSince }.map { patience - (tried - $0) } ?? patience
            let share = max(patience / 2, .seconds(5))
            do {
                let value = try await abandoning(after: max(min(left, share), .milliseconds(100))) { [client] in
                    try await operation(client)
                }
                let outage = state.withLock { state -> Duration? in
                    defer { state.unreachableSince = nil }
                    return state.unreachableSince.map { clock.now - $0 }
                }
                if let outage {
                    logger.warning(
                        "the run queue answers again", metadata: ["outage.seconds": "\(outage.components.seconds)"])
                }
                return value
            } catch {
                if error is CancellationError { throw error }
                onFailure()
                // The outage began when the first try that failed began (it may have waited all along).
                let (since, first, reason) = state.withLock { state -> (ContinuousClock.Instant, Bool, String) in
                    let first = state.unreachableSince == nil
                    if first {
                        state.unreachableSince = tried
                        state.unreachableReason = client.describe(error)
                    }
                    return (state.unreachableSince ?? tried, first, state.unreachableReason)
                }
                if first {
                    logger.warning(
                        "the run queue does not answer; retrying",
                        metadata: ["queue.operation": "\(what)", "error": "\(reason)"])
                }
                if clock.now - since >= patience {
                    throw CoordinatorError(
                        .queueUnavailable,
                        "the run queue did not answer for \(patience.components.seconds) s (ORCHESTRATE_CONNECT_TIMEOUT): \(reason)"
                    )
                }
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(1))
            }
        }
    }
}
