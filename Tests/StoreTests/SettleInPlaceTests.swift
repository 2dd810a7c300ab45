import Foundation
import OrchestrateModel
import OrchestrateTesting
import PostgresNIO
import Store
import Testing

/// A run's scenarios change once each as they settle, a batch's all at once: each change stays on its row's page,
/// without new entries in the table's indexes (migration 34).
@Suite("Settling in place")
struct SettleInPlaceTests {
    /// `run_scenarios`' updates so far, and how many of them stayed on their page (heap-only), as the statistics say
    /// once this connection's are in.
    static func updates(_ database: Database) async throws -> (all: Int64, inPlace: Int64) {
        try await database.client.query("SELECT pg_stat_force_next_flush()")
        try await database.client.query("SELECT pg_stat_clear_snapshot()")
        let rows = try await database.client.query(
            "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'run_scenarios'")
        for try await (all, inPlace) in rows.decode((Int64, Int64).self) { return (all, inPlace) }
        return (0, 0)
    }

    @Test(
        "a run's 400 scenarios, settled a round of 8 at a time and then 208 in one round as a batch's are, change in place"
    )
    func settleInPlace() async throws {
        try await ReadsAtScaleTests.withCountedReads { database, runs in
            let plan = ReadsAtScaleTests.plan(ReadsAtScaleTests.noOps("p", count: 400), workers: 8)
            try await runs.create(plan)
            try await runs.join(plan.id, member: "test/7", host: "test", node: "test", workers: 8)
            let before = try await Self.updates(database)
            let queue = AttemptQueue(database: database)
            let slots = (1...8).map {
                Claimant(worker: WorkerIdentity(host: "test", pid: 7, slot: $0), port: 1000 + $0)
            }
            func claims() async throws -> [(claimed: ClaimedAttempt, result: AttemptResult)] {
                let claimed = try await queue.round(QueueRound(runID: plan.id, claimants: slots)).claimed
                    .compactMap { $0 }
                try #require(!claimed.isEmpty, "the queue ran out")
                return claimed.map { ($0, AttemptResult(outcome: .passed, exitCode: 0, durationMilliseconds: 2)) }
            }
            // The first 200 a round of 8 at a time: each slot's result with its next claim.
            var finished = 0
            var pending = try await claims()
            while finished + pending.count < 200 {
                let reply = try await queue.round(QueueRound(runID: plan.id, completions: pending, claimants: slots))
                finished += pending.count
                pending = reply.claimed.compactMap { $0 }.map {
                    ($0, AttemptResult(outcome: .passed, exitCode: 0, durationMilliseconds: 2))
                }
                try #require(!pending.isEmpty, "the queue ran out at \(finished)")
            }
            // The rest claimed, then settled in one round, as a batch's tests are.
            while finished + pending.count < 400 { pending += try await claims() }
            _ = try await queue.round(QueueRound(runID: plan.id, completions: pending))
            finished += pending.count
            #expect(finished == 400, "every scenario ran once")
            let after = try await Self.updates(database)
            let (all, inPlace) = (after.all - before.all, after.inPlace - before.inPlace)
            #expect(all >= 400, "each scenario settled: \(all) updates")
            #expect(inPlace * 10 >= all * 9, "\(inPlace) of \(all) updates in place")
        }
    }
}
