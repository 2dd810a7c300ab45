import OrchestrateModel
import Synchronization
import Testing

/// A database call whose answer is lost neither ends nor heeds cancellation; the caller must go on all the same.
@Suite("Giving up on an operation that never ends")
struct DeadlineTests {
    /// An operation that ignores cancellation: it ends only when the test opens the gate.
    final class Gate: Sendable {
        private let waiting = Mutex<[CheckedContinuation<Void, Never>]>([])
        private let opened = Mutex(false)

        func wait() async {
            await withCheckedContinuation { continuation in
                let open = opened.withLock { $0 }
                if open { return continuation.resume() }
                waiting.withLock { $0.append(continuation) }
            }
        }

        func open() {
            opened.withLock { $0 = true }
            for continuation in waiting.withLock({ waiting in
                defer { waiting = [] }
                return waiting
            }) {
                continuation.resume()
            }
        }
    }

    @Test("an operation that does not end, even when cancelled, is given up on at the limit")
    func givesUp() async throws {
        let gate = Gate()
        defer { gate.open() }
        let clock = ContinuousClock()
        let started = clock.now
        await #expect(throws: DeadlineExceeded.self) {
            try await abandoning(after: .milliseconds(200)) { await gate.wait() }
        }
        // Bounded by the limit, not by the operation: it would wait for good.
        #expect(clock.now - started < .seconds(30))
    }

    @Test("an operation that ends first gives its value or its error")
    func answers() async throws {
        #expect(try await abandoning(after: .seconds(600)) { 42 } == 42)
        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await abandoning(after: .seconds(600)) { () async throws -> Int in throw Refused() }
        }
    }

    @Test("cancelling the caller ends its wait, though the operation goes on")
    func cancelled() async throws {
        let gate = Gate()
        defer { gate.open() }
        let caller = Task { try await abandoning(after: .seconds(600)) { await gate.wait() } }
        caller.cancel()
        await #expect(throws: CancellationError.self) { try await caller.value }
    }
}
