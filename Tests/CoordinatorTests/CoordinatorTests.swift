import Coordinator
import Foundation
import Logging
import OrchestrateModel
import OrchestrateTesting
import Orchestrator  // the PostgreSQL queue's conformance to the coordinator's queue protocol
import Store
import Synchronization
import Testing

@Suite("Coordinator", .timeLimit(.minutes(3)))
struct CoordinatorTests {
    func plan(_ database: Database, _ scenarios: [Scenario], retries: Int = 0) async throws -> UUID {
        let id = UUID()
        try await RunStore(database: database).create(
            RunPlan(
                id: id, host: "test", gitRevision: nil, workingDirectory: "/tmp", configPath: nil, mode: .replay,
                workers: 2,
                retries: retries, scenarios: scenarios
            ))
        return id
    }

    func configuration(
        _ runID: UUID, _ directory: TemporaryDirectory, lease: Duration = .seconds(30)
    ) -> CoordinatorConfiguration {
        var configuration = CoordinatorConfiguration(
            runID: runID, workers: 2, host: "this-host", workingDirectory: directory.path,
            attemptsDirectory: directory.file("attempts"), mode: .replay, baseEnvironment: ["PATH": "/usr/bin:/bin"],
            frozenNow: "2026-01-01T00:00:00Z"
        )
        configuration.lease = lease
        configuration.pollInterval = .milliseconds(20)
        return configuration
    }

    func scenario(_ id: String, _ command: String) -> Scenario {
        Scenario(id: id, name: id, command: command, timeoutMilliseconds: 20_000)
    }

    @Test("the attempt of a worker that died elsewhere is taken back when its lease expires and completed once")
    func deadWorkerLease() async throws {
        try await TemporaryDirectory.with { directory in
            try await withTestDatabase { database in
                let runID = try await plan(
                    database,
                    [scenario("a", "echo a >> runs"), scenario("b", "echo b >> runs"), scenario("c", "echo c >> runs")])
                // A worker on another host claims one attempt (a short lease) and is never heard of again.
                let lost = try #require(
                    try await AttemptQueue(database: database, lease: .milliseconds(300))
                        .claim(runID: runID, worker: WorkerIdentity(host: "gone", pid: 42, slot: 1), port: 1))
                // The live coordinator's own leases are long enough that a busy machine never lets them lapse.
                let queue = AttemptQueue(database: database, lease: .seconds(2))
                let coordinator = Coordinator(
                    configuration: configuration(runID, directory, lease: .seconds(2)), queue: queue,
                    logger: Logger(label: "test"))
                #expect(try await coordinator.run() == .drained)
                let runs = directory.read("runs").split(separator: "\n").map(String.init).sorted()
                #expect(runs == ["a", "b", "c"])
                // The dead worker's late result is refused: the attempt belongs to its replacement now.
                let late = try await queue.complete(
                    lost, result: AttemptResult(outcome: .failed, exitCode: 1, durationMilliseconds: 1))
                #expect(!late.accepted)
                let report = try await RunStore(database: database).report(runID)
                #expect(report.scenarios.allSatisfy { $0.result == .passed && $0.attempts.count == 1 })
            }
        }
    }

    @Test("a result whose round the queue does not answer for longer than a lease keeps its lease, and counts once")
    func leaseHeldWhileRecording() async throws {
        try await TemporaryDirectory.with { directory in
            try await withTestDatabase { database in
                let runID = try await plan(database, [scenario("a", "echo a >> runs")])
                // Leases of 3 s, renewed every second; the round carrying the result is refused for 8 s meanwhile.
                let queue = UnansweredResults(AttemptQueue(database: database, lease: .seconds(3)), for: .seconds(8))
                let coordinator = Coordinator(
                    configuration: configuration(runID, directory, lease: .seconds(3)), queue: queue,
                    logger: Logger(label: "test"))
                #expect(try await coordinator.run() == .drained)
                #expect(queue.refusedRounds > 2)
                // Run once, and its result taken: the reaper never took the attempt back while it waited.
                #expect(directory.read("runs") == "a\n")
                let report = try await RunStore(database: database).report(runID)
                #expect(report.scenarios.first?.attempts.map(\.state) == [.finished])
                #expect(report.scenarios.first?.result == .passed)
            }
        }
    }

    @Test("a failed attempt is retried on the other slot when it is free, and the scenario is flaky")
    func retryOnAnotherSlot() async throws {
        try await TemporaryDirectory.with { directory in
            try await withTestDatabase { database in
                let runID = try await plan(
                    database, [scenario("flaky", #"test "$ORCHESTRATE_ATTEMPT" = 2"#)], retries: 1)
                let queue = AttemptQueue(database: database)
                let coordinator = Coordinator(
                    configuration: configuration(runID, directory), queue: queue, logger: Logger(label: "test"))
                #expect(try await coordinator.run() == .drained)
                let entry = try #require(try await RunStore(database: database).report(runID).scenarios.first)
                #expect(entry.result == .flaky)
                #expect(entry.attempts.map(\.outcome) == [.failed, .passed])
                #expect(entry.attempts[0].worker != entry.attempts[1].worker)
            }
        }
    }

    @Test("a slot with nothing to do learns at once that a result brought work back (a retry) or finished the run")
    func idleSlotsWake() async throws {
        try await TemporaryDirectory.with { directory in
            try await withTestDatabase { database in
                // The retry comes back while the other slot waits for work; it takes it, then both see the run drained
                // — long before a minute's poll interval would have let them look again.
                let runID = try await plan(
                    database, [scenario("flaky", #"sleep 0.3; test "$ORCHESTRATE_ATTEMPT" = 2"#)], retries: 1)
                var configuration = configuration(runID, directory)
                configuration.pollInterval = .seconds(60)
                let coordinator = Coordinator(
                    configuration: configuration, queue: AttemptQueue(database: database), logger: Logger(label: "test")
                )
                let start = ContinuousClock.now
                #expect(try await coordinator.run() == .drained)
                #expect(ContinuousClock.now - start < .seconds(20))
                let entry = try #require(try await RunStore(database: database).report(runID).scenarios.first)
                #expect(entry.result == .flaky)
                #expect(entry.attempts[0].worker != entry.attempts[1].worker)
            }
        }
    }

    @Test("a batch's results go to the queue in one round, not the first alone and the rest in the next")
    func batchResultsInOneRound() async throws {
        try await TemporaryDirectory.with { directory in
            try await withTestDatabase { database in
                // One process reports 30 tests in a JUnit file; one slot runs them all.
                let batch = Batch(
                    command:
                        #"for id in {ids}; do printf '<testcase classname="s" name="%s" time="0.01"/>' "${id#s.}"; done"#
                        + #" | { printf '<testsuites><testsuite name="s">'; cat; printf '</testsuite></testsuites>'; }"#
                        + #" > "$ORCHESTRATE_ARTIFACTS_DIR/junit.xml""#,
                    size: 30, milliseconds: 60_000)
                let scenarios = (0..<30).map {
                    Scenario(
                        id: "s.t\($0)", name: "t\($0)", command: batch.command(for: ["s.t\($0)"]),
                        timeoutMilliseconds: 20_000, results: .junit, batch: batch)
                }
                let runID = try await plan(database, scenarios)
                var configuration = configuration(runID, directory)
                configuration.workers = 1
                let completed = Mutex<[Int]>([])
                let coordinator = Coordinator(
                    configuration: configuration, queue: AttemptQueue(database: database), logger: Logger(label: "test")
                ) { event in
                    if case .queueRound(_, _, let count, _, _) = event, count > 0 {
                        completed.withLock { $0.append(count) }
                    }
                }
                #expect(try await coordinator.run() == .drained)
                let report = try await RunStore(database: database).report(runID)
                #expect(report.scenarios.allSatisfy { $0.result == .passed && $0.attempts.count == 1 })
                #expect(
                    completed.withLock { $0 } == [30], "the rounds that recorded results, by how many each recorded")
            }
        }
    }

    @Test("a stop request ends the running attempt and puts it back in the queue")
    func stop() async throws {
        try await TemporaryDirectory.with { directory in
            try await withTestDatabase { database in
                let runID = try await plan(database, [scenario("long", "sleep 30")])
                let queue = AttemptQueue(database: database)
                let coordinator = Coordinator(
                    configuration: configuration(runID, directory), queue: queue, logger: Logger(label: "test"))
                async let outcome = coordinator.run()
                #expect(await eventually { (try? await queue.counts(runID: runID).running) == 1 })
                coordinator.requestStop()
                #expect(try await outcome == .interrupted)
                #expect(try await queue.counts(runID: runID) == QueueCounts(queued: 1, running: 0))
            }
        }
    }

    @Test("attempts claimed ahead while work is short run like any other, and go back to the queue on a stop")
    func claimAhead() async throws {
        try await TemporaryDirectory.with { directory in
            try await withTestDatabase { database in
                // Never-seen scenarios go in id order: the quick ones first, so claiming ahead is on when the long ones
                // come.
                let quick = (0..<12).map { scenario(String(format: "a%02d", $0), "true") }
                let long = (0..<10).map { scenario(String(format: "b%02d", $0), "sleep 30") }
                let runID = try await plan(database, quick + long)
                let queue = AttemptQueue(database: database)
                let coordinator = Coordinator(
                    configuration: configuration(runID, directory), queue: queue, logger: Logger(label: "test"))
                async let outcome = coordinator.run()
                // The quick ones passed; two slots run two long ones, and more were claimed ahead, under leases.
                let store = RunStore(database: database)
                #expect(
                    await eventually {
                        let passed = (try? await store.summary(runID))??.passed ?? 0
                        let running = (try? await queue.counts(runID: runID))?.running ?? 0
                        return passed == 12 && running > 2
                    })
                coordinator.requestStop()
                #expect(try await outcome == .interrupted)
                #expect(try await queue.counts(runID: runID) == QueueCounts(queued: 10, running: 0))
                let report = try await store.report(runID)
                #expect(report.scenarios.filter { $0.result == .passed }.map(\.scenario.id) == quick.map(\.id))
                #expect(report.scenarios.flatMap(\.attempts).filter { $0.state == .finished }.count == 12)
            }
        }
    }

    @Test("a host holds about half a second of work per slot claimed ahead, and none of attempts of a second or more")
    func claimAheadDepth() {
        let depth = { (milliseconds: Double?) in RoundBatcher.aheadPerSlot(averageMilliseconds: milliseconds) }
        // Before the first result, and for attempts of a second or more, nothing: other hosts find the work queued.
        #expect(depth(nil) == 0)
        #expect(depth(1000) == 0)
        #expect(depth(30_000) == 0)
        // No-op and short attempts: up to eight each, so that a round carries several slots' results and claims.
        #expect(depth(0) == 8)
        #expect(depth(5) == 8)
        #expect(depth(70) == 8)
        #expect(depth(100) == 5)
        #expect(depth(190) == 3)
        #expect(depth(250) == 2)
        #expect(depth(400) == 2)
        #expect(depth(500) == 1)
        #expect(depth(999) == 1)
    }
}

/// The PostgreSQL queue, except that a round carrying results fails — as when the database does not answer — for a
/// while after the first one.
final class UnansweredResults: AttemptQueueClient {
    let queue: AttemptQueue
    let period: Duration
    private let state = Mutex<(since: ContinuousClock.Instant?, refused: Int)>((nil, 0))

    init(_ queue: AttemptQueue, for period: Duration) {
        (self.queue, self.period) = (queue, period)
    }

    struct Unanswered: Error {}

    var refusedRounds: Int { state.withLock { $0.refused } }

    func round(_ round: QueueRound) async throws -> QueueRoundReply {
        if !round.completions.isEmpty {
            let refuse = state.withLock { state -> Bool in
                let since = state.since ?? .now
                state.since = since
                guard ContinuousClock.now - since < period else { return false }
                state.refused += 1
                return true
            }
            if refuse { throw Unanswered() }
        }
        return try await queue.round(round)
    }

    func release(_ claimed: ClaimedAttempt) async throws -> Bool { try await queue.release(claimed) }
    func claimCompanions(
        of head: ClaimedAttempt, limit: Int, slots: Int, budgetMilliseconds: Int64
    ) async throws -> [ClaimedAttempt] {
        try await queue.claimCompanions(of: head, limit: limit, slots: slots, budgetMilliseconds: budgetMilliseconds)
    }
    func requeue(attemptID: Int64, token: UUID, solo: Bool) async throws -> Bool {
        try await queue.requeue(attemptID: attemptID, token: token, solo: solo)
    }
    func heartbeat(_ attempts: [ClaimedAttempt]) async throws -> Set<UUID> { try await queue.heartbeat(attempts) }
    func reapExpired(runID: UUID) async throws -> Int { try await queue.reapExpired(runID: runID) }
    func leaseHolders(runID: UUID) async throws -> [LeaseHolder] { try await queue.leaseHolders(runID: runID) }
    func counts(runID: UUID) async throws -> QueueCounts { try await queue.counts(runID: runID) }
    func releaseOrphans(runID: UUID, owner: String, keeping tokens: [UUID]) async throws -> Int {
        try await queue.releaseOrphans(runID: runID, owner: owner, keeping: tokens)
    }
    var patience: Duration { .seconds(60) }
    func describe(_ error: any Error) -> String { "\(error)" }
}
