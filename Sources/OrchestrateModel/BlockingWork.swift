import Foundation

/// Runs `work`, which blocks (reads and parses files, walks folders, waits on a program), on a thread of its own: a
/// serial queue of its own overcommits, so it never takes one of the threads Swift's cooperative pool runs on. A
/// concurrent queue, or a global one, would not do: on Linux they draw from the same threads as the pool (as many as
/// there are cores), and a few blocked calls starve every task of the process — the mock servers' requests and the
/// queue's rounds of every other slot among them.
package func blockingOffPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue(label: "orchestrate.blocking").async { continuation.resume(with: Result { try work() }) }
    }
}

/// ``blockingOffPool(_:)`` for work that does not throw.
package func blockingOffPool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        DispatchQueue(label: "orchestrate.blocking").async { continuation.resume(returning: work()) }
    }
}
