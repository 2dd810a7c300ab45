/// The value of `operation`, or ``DeadlineExceeded`` once `limit` passed (the operation is cancelled): for the
/// database's clients, whose requests for a pooled connection wait without an error while the server is down.
package func within<T: Sendable>(_ limit: Duration, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: Result<T, any Error>?.self) { group in
        group.addTask {
            do {
                return .success(try await operation())
            } catch {
                return .failure(error)
            }
        }
        group.addTask {
            try? await Task.sleep(for: limit)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let result = first else { throw DeadlineExceeded(limit: limit) }
        return try result.get()
    }
}

/// An operation that did not end within its time.
package struct DeadlineExceeded: Error, CustomStringConvertible {
    package var limit: Duration
    package var description: String { "no answer within \(limit.components.seconds) s" }
}
