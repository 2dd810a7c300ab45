/// Tests wait for conditions, with a deadline, never for a fixed time: these poll the condition every 20 ms.

/// Whether `condition` came to hold before `timeout` passed.
package func eventually(timeout: Duration = .seconds(10), _ condition: () async throws -> Bool) async rethrows -> Bool {
    try await eventuallyValue(timeout: timeout) { try await condition() ? true : nil } ?? false
}

/// The first value `body` gives (not `nil`) before `timeout` passes; `nil` when none came.
package func eventuallyValue<T>(timeout: Duration = .seconds(10), _ body: () async throws -> T?) async rethrows -> T? {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while true {
        if let value = try await body() { return value }
        // A test that ran out of its time limit is cancelled: it stops waiting at once.
        guard clock.now < deadline, !Task.isCancelled else { return nil }
        try? await Task.sleep(for: .milliseconds(20))
    }
}

/// Whether `condition` held every time it was looked at for `duration`: for what must *not* happen (rows that must
/// wait, a lease that must not expire) a time has to pass, and the condition is checked all along it.
package func holds(for duration: Duration, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let clock = ContinuousClock()
    let end = clock.now + duration
    while clock.now < end {
        guard try await condition(), !Task.isCancelled else { return false }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return try await condition()
}

/// Runs `body` `times` times on a schedule, `interval` apart (a steady flow of input, heartbeats), whatever each run
/// takes: the pace of the input is what the test is about, not a wait for something to happen.
package func paced(every interval: Duration, times: Int, _ body: (Int) async throws -> Void) async throws {
    let clock = ContinuousClock()
    let start = clock.now
    for index in 0..<times {
        try await clock.sleep(until: start + interval * index)
        try await body(index)
    }
}
