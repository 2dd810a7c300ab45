import OrchestrateModel

/// The run's progress as a pure state machine: fed with coordinator events, read by displays.
package struct RunProgress: Sendable {
    package struct Running: Sendable, Equatable {
        package var scenarioID: String
        package var attempt: Int
        package var startedAt: ContinuousClock.Instant
        package var expectedMilliseconds: Int64?
    }

    package private(set) var total: Int
    package private(set) var passed = 0
    package private(set) var flaky = 0
    package private(set) var failed = 0
    /// Slot → what it runs now.
    package private(set) var running: [Int: Running] = [:]
    /// Scenario ids that failed for good, in order.
    package private(set) var failures: [String] = []
    package private(set) var attemptsFinished = 0
    /// Expected milliseconds of scenarios not yet settled (unknown ones count as `fallbackExpected`).
    private var expectedRemaining: [String: Int64]
    /// Scenarios counted as settled: each counts once, whatever the queue says twice.
    private var settledIDs: Set<String> = []
    private let workers: Int
    package let fallbackExpected: Int64

    package init(expected: [String: Int64?], workers: Int, fallbackExpected: Int64 = 1000) {
        self.total = expected.count
        self.workers = max(workers, 1)
        self.fallbackExpected = fallbackExpected
        self.expectedRemaining = expected.mapValues { $0 ?? fallbackExpected }
    }

    package var settled: Int { passed + flaky + failed }

    package mutating func apply(_ event: CoordinatorEvent, at now: ContinuousClock.Instant) {
        switch event {
        case .attemptStarted(let slot, let attempt):
            running[slot] = Running(
                scenarioID: attempt.scenario.id, attempt: attempt.attempt, startedAt: now,
                expectedMilliseconds: attempt.expectedMilliseconds)
        case .attemptFinished(let slot, let attempt, _, let ack):
            clear(slot, if: attempt)
            attemptsFinished += 1
            guard let settled = ack.settled, settledIDs.insert(attempt.scenario.id).inserted else { return }
            expectedRemaining[attempt.scenario.id] = nil
            switch settled {
            case .passed: passed += 1
            case .flaky: flaky += 1
            case .failed:
                failed += 1
                failures.append(attempt.scenario.id)
            case .pending: break
            }
        case .attemptReleased(let slot, let attempt), .attemptLost(let slot, let attempt, _):
            clear(slot, if: attempt)
        case .slotRetired(let slot, _):
            running[slot] = nil
        case .slotReady, .leasesReclaimed, .leaseLost, .queueRound:
            break
        }
    }

    /// A slot's result can arrive after it started its next attempt: only clear what it still shows.
    private mutating func clear(_ slot: Int, if attempt: ClaimedAttempt) {
        if let shown = running[slot], shown.scenarioID == attempt.scenario.id, shown.attempt == attempt.attempt {
            running[slot] = nil
        }
    }

    /// The remaining work spread over the workers, but never less than the longest single piece left
    /// (from expected durations); `nil` for an empty run.
    package func estimatedRemaining(at now: ContinuousClock.Instant) -> Duration? {
        guard total > 0 else { return nil }
        var milliseconds: Int64 = 0
        var longest: Int64 = 0
        let runningIDs = Set(running.values.map(\.scenarioID))
        for (id, expected) in expectedRemaining where !runningIDs.contains(id) {
            milliseconds += expected
            longest = max(longest, expected)
        }
        for entry in running.values {
            let left = max(
                (entry.expectedMilliseconds ?? fallbackExpected) - (now - entry.startedAt).wholeMilliseconds, 0)
            milliseconds += left
            longest = max(longest, left)
        }
        return .milliseconds(max(milliseconds / Int64(workers), longest))
    }
}
