import Foundation
import OrchestrateModel
import OrchestrateTesting
import Store
import Testing

/// Batches of a suite's tests: a claimed test takes others of its batch command into its process, within the batch's
/// bounds, fewer near the end of the run; retries, lanes and tests whose batch crashed run alone.
@Suite("Attempt queue: batches")
struct BatchQueueTests {
    /// A run of `count` tests of one batch command (and `others` without one), tests never seen before.
    static func plan(
        _ database: Database, count: Int, size: Int, seconds: Int64 = 60, retries: Int = 0, others: Int = 0,
        expected: [String: Int64] = [:]
    ) async throws -> UUID {
        let batch = Batch(command: "runner {ids}", size: size, milliseconds: seconds * 1000)
        var scenarios = (0..<count).map {
            Scenario(
                id: "t\($0)", name: "t\($0)", command: batch.command(for: ["t\($0)"]), timeoutMilliseconds: 60_000,
                results: .junit, batch: batch)
        }
        scenarios += (0..<others).map {
            Scenario(id: "o\($0)", name: "o\($0)", command: "true", timeoutMilliseconds: 60_000)
        }
        let id = UUID()
        try await RunStore(database: database).create(
            RunPlan(
                id: id, host: "test", gitRevision: nil, workingDirectory: "/tmp", configPath: nil, mode: .replay,
                workers: 2,
                retries: retries, scenarios: scenarios))
        return id
    }

    static let worker = WorkerIdentity(host: "test", pid: 1, slot: 1)

    @Test("a batch holds at most its size, and near the end of the run only its share of what is left (the last mile)")
    func lastMile() async throws {
        try await withTestDatabase { database in
            let runID = try await Self.plan(database, count: 20, size: 5, others: 3)
            let queue = AttemptQueue(database: database)
            var sizes: [Int] = []
            var seen = Set<String>()
            while let head = try await queue.claim(runID: runID, worker: Self.worker, port: 1) {
                let companions = try await queue.claimCompanions(
                    of: head, limit: 4, slots: 4, budgetMilliseconds: 60_000)
                #expect(
                    companions.allSatisfy { $0.scenario.batch == head.scenario.batch && $0.scenario.id.hasPrefix("t") })
                let batch = [head] + companions
                for attempt in batch {
                    #expect(seen.insert(attempt.scenario.id).inserted, "\(attempt.scenario.id) claimed twice")
                    #expect(try await queue.complete(attempt, result: passed()).accepted)
                }
                if head.scenario.batch != nil {
                    sizes.append(batch.count)
                } else {
                    #expect(companions.isEmpty, "a test without a batch command runs alone")
                }
            }
            #expect(seen.count == 23)
            // Full batches while a quarter of what is queued (4 slots share it) holds 4 more tests (22, then 17 queued
            // behind the head), then a quarter of what is left (12 → 3 more, 8 → 2, 5 → 1), and the last test alone.
            #expect(sizes == [5, 5, 4, 3, 2, 1], "\(sizes)")
        }
    }

    @Test("near the end, a batch's share counts the slots of every host that joined the run")
    func hostsShareTheLastMile() async throws {
        try await withTestDatabase { database in
            let runID = try await Self.plan(database, count: 20, size: 5)
            let runs = RunStore(database: database)
            try await runs.join(runID, member: "a/1", host: "a", node: "a", workers: 4)
            try await runs.join(runID, member: "b/2", host: "b", node: "b", workers: 4)
            let queue = AttemptQueue(database: database)
            let head = try #require(try await queue.claim(runID: runID, worker: Self.worker, port: 1))
            // 19 queued over 8 slots (not this host's 4): 2 more, not 4.
            #expect(
                try await queue.claimCompanions(of: head, limit: 4, slots: 4, budgetMilliseconds: 60_000).count == 2)
        }
    }

    @Test("a batch stays within its expected seconds; tests never seen count as nothing")
    func budget() async throws {
        try await withTestDatabase { database in
            let runID = try await Self.plan(database, count: 8, size: 8)
            let queue = AttemptQueue(database: database)
            let head = try #require(try await queue.claim(runID: runID, worker: Self.worker, port: 1))
            #expect(
                try await queue.claimCompanions(of: head, limit: 7, slots: 1, budgetMilliseconds: 60_000).count == 7)
            // A budget already spent by the head takes nothing with it.
            let second = try await Self.plan(database, count: 3, size: 8)
            let alone = try #require(try await queue.claim(runID: second, worker: Self.worker, port: 1))
            #expect(try await queue.claimCompanions(of: alone, limit: 7, slots: 1, budgetMilliseconds: -1).isEmpty)
        }
    }

    @Test("a retry runs alone, and so does a test whose batch ended before reporting it")
    func alone() async throws {
        try await withTestDatabase { database in
            let runID = try await Self.plan(database, count: 4, size: 4, retries: 1)
            let queue = AttemptQueue(database: database)
            let head = try #require(try await queue.claim(runID: runID, worker: Self.worker, port: 1))
            let companions = try await queue.claimCompanions(of: head, limit: 3, slots: 1, budgetMilliseconds: 60_000)
            #expect(companions.count == 3)
            // The head failed; the others' process crashed before reporting them.
            #expect(
                try await queue.complete(head, result: AttemptResult(outcome: .failed, durationMilliseconds: 1))
                    .retryQueued)
            for companion in companions {
                #expect(try await queue.requeue(attemptID: companion.id, token: companion.leaseToken, solo: true))
            }
            var claimed: [ClaimedAttempt] = []
            while let next = try await queue.claim(
                runID: runID, worker: WorkerIdentity(host: "test", pid: 1, slot: 2), port: 2)
            {
                #expect(
                    try await queue.claimCompanions(of: next, limit: 3, slots: 1, budgetMilliseconds: 60_000).isEmpty)
                claimed.append(next)
                #expect(try await queue.complete(next, result: passed()).accepted)
            }
            #expect(claimed.count == 4)
            // A test requeued from a crashed batch keeps its attempt number: no retry is spent.
            #expect(claimed.filter { $0.scenario.id != head.scenario.id }.allSatisfy { $0.attempt == 1 })
            #expect(claimed.first { $0.scenario.id == head.scenario.id }?.attempt == 2)
        }
    }
}
