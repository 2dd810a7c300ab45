import Synchronization

/// The value of `operation`, or ``DeadlineExceeded`` once `limit` passed — for the database's clients, whose calls may
/// never end, not even when cancelled: a request for a pooled connection waits without an error while the server is
/// down, and a statement on a connection the server took and never answers (a cluster crashing over and over on a full
/// disk) waits for good. At the limit the operation is cancelled and left behind, never waited for: the caller goes
/// on. Cancelling the caller ends the wait too.
package func abandoning<T: Sendable>(
    after limit: Duration, _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await abandoning(
        when: {
            guard (try? await Task.sleep(for: limit)) != nil else { return nil }
            return DeadlineExceeded(limit: limit)
        }, operation)
}

/// The value of `operation`, or the error `watch` returns first: `watch` runs beside it, and returns an error when the
/// operation is to be given up on (`nil` once cancelled, when the operation ended). The operation is then cancelled
/// and left behind, never waited for. Cancelling the caller ends the wait too.
package func abandoning<T: Sendable>(
    when watch: @escaping @Sendable () async -> (any Error)?, _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    let race = Race<T>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            race.start(continuation, watch: watch, operation)
        }
    } onCancel: {
        race.finish(.failure(CancellationError()))
    }
}

/// An operation against a watch: whichever ends first resumes the waiting caller, once; the other is cancelled.
private final class Race<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        /// What ended the race before the caller began to wait (it was cancelled at once).
        var early: Result<T, any Error>?
        var done = false
        var tasks: [Task<Void, Never>] = []
    }

    private let state = Mutex(State())

    func start(
        _ continuation: CheckedContinuation<T, any Error>, watch: @escaping @Sendable () async -> (any Error)?,
        _ operation: @escaping @Sendable () async throws -> T
    ) {
        let early = state.withLock { state -> Result<T, any Error>? in
            guard !state.done else { return state.early }
            state.continuation = continuation
            return nil
        }
        if let early { return continuation.resume(with: early) }
        let work = Task {
            do {
                self.finish(.success(try await operation()))
            } catch {
                self.finish(.failure(error))
            }
        }
        let timer = Task {
            if let error = await watch() { self.finish(.failure(error)) }
        }
        let finished = state.withLock { state -> Bool in
            state.tasks = [work, timer]
            return state.done
        }
        if finished {
            work.cancel()
            timer.cancel()
        }
    }

    func finish(_ result: Result<T, any Error>) {
        let (continuation, tasks) = state.withLock {
            state -> (CheckedContinuation<T, any Error>?, [Task<Void, Never>]) in
            guard !state.done else { return (nil, []) }
            state.done = true
            if state.continuation == nil { state.early = result }
            defer { state.continuation = nil }
            return (state.continuation, state.tasks)
        }
        for task in tasks { task.cancel() }
        continuation?.resume(with: result)
    }
}

/// An operation that did not end within its time.
package struct DeadlineExceeded: Error, CustomStringConvertible {
    package var limit: Duration
    package var description: String { "no answer within \(limit.components.seconds) s" }
}
