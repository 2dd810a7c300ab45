import Foundation
import OrchestrateModel
import OrchestrateTesting
import PostgresNIO
import Store
import Testing

@Suite("Run store")
struct RunStoreTests {
    @Test("a run keeps which failures its retries are for: every host that joins it goes by the planner's choice")
    func retryWhen() async throws {
        try await withTestDatabase { database in
            let runs = RunStore(database: database)
            var plan = RunPlan(
                host: "test", gitRevision: nil, workingDirectory: "/tmp", configPath: nil, mode: .live, workers: 1,
                retries: 2,
                scenarios: [Scenario(id: "a", name: "a", command: "true", timeoutMilliseconds: 1_000)])
            plan.retryWhen = .evidence
            try await runs.create(plan)
            #expect(try await runs.joinable(plan.id)?.retryWhen == .evidence)
            let plain = RunPlan(
                host: "test", gitRevision: nil, workingDirectory: "/tmp", configPath: nil, mode: .live, workers: 1,
                retries: 2, scenarios: plan.scenarios)
            try await runs.create(plain)
            #expect(try await runs.joinable(plain.id)?.retryWhen == .any)
        }
    }

    @Test("a run's expected durations are history's medians, except those the planner read already, taken as read")
    func expectedAsRead() async throws {
        try await withTestDatabase { database in
            let runs = RunStore(database: database)
            let scenarios = ["read", "unread", "never", "cleared"].map {
                Scenario(id: $0, name: $0, command: "true", timeoutMilliseconds: 1_000)
            }
            func plan() -> RunPlan {
                RunPlan(
                    host: "test", gitRevision: nil, workingDirectory: "/tmp", configPath: nil, mode: .live,
                    workers: 1, retries: 0, scenarios: scenarios)
            }
            let earlier = plan()
            try await runs.create(earlier)
            try await database.client.query(
                """
                UPDATE attempts SET state = 'finished', outcome = 'passed', finished_at = now(), started_at = now(),
                    duration_ms = 300
                WHERE run_id = \(earlier.id) AND scenario_id <> 'never'
                """)
            let history: [String: Int64?] = ["read": 300, "unread": 300, "never": nil, "cleared": 300]
            #expect(try await runs.create(plan()).expected == history)
            // What the planner read stands for history: a time, or none (never seen passing), even where history has
            // one.
            var sized = plan()
            sized.expected = ["read": 40, "never": nil, "cleared": nil]
            let taken: [String: Int64?] = ["read": 40, "unread": 300, "never": nil, "cleared": nil]
            #expect(try await runs.create(sized).expected == taken)
            #expect(try await runs.unsettled(sized.id)?.expected == taken)
        }
    }

    @Test("a planned run reads back with every scenario as planned: tags, environment, feature file and line, order")
    func planReadsBack() async throws {
        try await withTestDatabase { database in
            let scenarios = [
                Scenario(
                    id: "login", name: "Log in", command: "make login", tags: ["smoke", "auth"],
                    timeoutMilliseconds: 5_000,
                    environment: ["USER": "ann", "QUOTE": "say \"hi\"\n"], uri: "features/login.feature", line: 12),
                Scenario(id: "no-tags", name: "No tags", command: "true", timeoutMilliseconds: 1_000),
                Scenario(
                    id: "one-tag", name: "One tag, unicode ✓", command: "echo ✓", tags: ["wip"],
                    timeoutMilliseconds: 2_000),
                Scenario(
                    id: "empty-again", name: "Empty again", command: "true", tags: [], timeoutMilliseconds: 3_000,
                    line: 7),
                Scenario(id: "last", name: "Last", command: "true", tags: ["a", "b", "c"], timeoutMilliseconds: 4_000),
            ]
            let runs = RunStore(database: database)
            let plan = RunPlan(
                host: "test", gitRevision: "abc", workingDirectory: "/tmp", configPath: "orchestrate.yml",
                mode: .replay, workers: 2, retries: 1, scenarios: scenarios)
            let planned = try await runs.create(plan)
            // Never seen passing: no expected durations yet (they run first).
            #expect(planned.expected.count == scenarios.count && planned.expected.values.allSatisfy { $0 == nil })
            #expect(try await runs.unsettled(plan.id)?.startedAt == planned.startedAt)
            let report = try await runs.report(plan.id)
            #expect(report.scenarios.map(\.scenario) == scenarios)
            #expect(report.scenarios.allSatisfy { $0.attempts.count == 1 && $0.result == .pending })
            // Planning the same scenarios again leaves them as they are; a changed one is updated.
            var changed = scenarios
            changed[1].tags = ["now-tagged"]
            changed[1].name = "Renamed"
            let again = RunPlan(
                host: "test", gitRevision: "abc", workingDirectory: "/tmp", configPath: nil,
                mode: .replay, workers: 2, retries: 0, scenarios: changed)
            try await runs.create(again)
            #expect(try await runs.report(again.id).scenarios.map(\.scenario) == changed)
        }
    }

    @Test("a run's report read with its planned scenarios at hand is the report read whole; one they lack reads whole")
    func reportWithPlannedScenarios() async throws {
        try await withTestDatabase { database in
            let batch = Batch(command: "runner --filter {ids-swift-testing}", size: 10, milliseconds: 60_000)
            let scenarios = [
                Scenario(
                    id: "M.S/a()", name: "a()", command: batch.command(for: ["M.S/a()"]), tags: ["x"],
                    timeoutMilliseconds: 5_000, environment: ["K": "v"], uri: "Tests/S.swift", line: 3,
                    results: .swiftpm, batch: batch),
                Scenario(id: "plain", name: "Plain", command: "true", timeoutMilliseconds: 1_000),
                Scenario(id: "fails", name: "Fails", command: "false", timeoutMilliseconds: 1_000),
            ]
            let runs = RunStore(database: database)
            let plan = RunPlan(
                host: "test", gitRevision: "abc", workingDirectory: "/tmp", configPath: nil, mode: .replay, workers: 1,
                retries: 0, scenarios: scenarios)
            try await runs.create(plan)
            let queue = AttemptQueue(database: database)
            let worker = WorkerIdentity(host: "test", pid: 1, slot: 1)
            while let claimed = try await queue.claim(runID: plan.id, worker: worker, port: 1) {
                let outcome: Outcome = claimed.scenario.id == "fails" ? .failed : .passed
                _ = try await queue.complete(claimed, result: AttemptResult(outcome: outcome, durationMilliseconds: 5))
            }
            func summary(_ report: RunReport) -> [String] {
                report.scenarios.map { entry in
                    "\(entry.scenario) \(entry.result) \(entry.verdict.map(\.rawValue) ?? "-") \(entry.quarantined) "
                        + "\(entry.expectedMilliseconds ?? -1) \(entry.sampled) \(entry.attempts.map(\.outcome))"
                }
            }
            let whole = try await runs.report(plan.id)
            #expect(whole.scenarios.map(\.result) == [.passed, .passed, .failed])
            #expect(summary(try await runs.report(plan.id, planned: scenarios)) == summary(whole))
            // The scenarios at hand are the ones the report shows; one missing, every scenario is read whole.
            var renamed = scenarios
            renamed[1].name = "as planned here"
            #expect(try await runs.report(plan.id, planned: renamed).scenarios[1].scenario.name == "as planned here")
            #expect(summary(try await runs.report(plan.id, planned: Array(renamed.dropLast()))) == summary(whole))
        }
    }

    @Test(
        "a run made mock traffic when one of its attempts that was not given back made an exchange; a compare run always did"
    )
    func mockTrafficCountsAttemptsKept() async throws {
        try await withTestDatabase { database in
            let runs = RunStore(database: database)
            let queue = AttemptQueue(database: database)
            let worker = WorkerIdentity(host: "test", pid: 1, slot: 1)
            let runID = try await plan(database, count: 2)
            #expect(try await !runs.mockTraffic(runID), "no attempt made an exchange")
            // The first execution made an exchange and was given back (its claim's answer lost): the report leaves it
            // out, so its exchange is not the run's traffic.
            let given = try #require(try await queue.claim(runID: runID, worker: worker, port: 1))
            try await storeExchanges(madeBy: [given.id], on: database)
            #expect(try await queue.releaseOrphans(runID: runID, owner: worker.process.description, keeping: []) == 1)
            #expect(try await !runs.mockTraffic(runID), "only an abandoned attempt made an exchange")
            #expect(try await !runs.report(runID).mockTraffic, "the report says what the question says")
            // Its scenario runs again and the new attempt makes one.
            var again = try #require(try await queue.claim(runID: runID, worker: worker, port: 1))
            while again.scenario.id != given.scenario.id {
                _ = try await queue.complete(again, result: passed())
                again = try #require(try await queue.claim(runID: runID, worker: worker, port: 1))
            }
            try await storeExchanges(madeBy: [again.id], on: database)
            #expect(try await runs.mockTraffic(runID))
            #expect(try await runs.report(runID).mockTraffic)

            let compare = RunPlan(
                host: "test", gitRevision: nil, workingDirectory: "/tmp", configPath: nil, mode: .compare, workers: 1,
                retries: 0, scenarios: [Scenario(id: "a", name: "a", command: "true", timeoutMilliseconds: 1_000)])
            try await runs.create(compare)
            #expect(try await runs.mockTraffic(compare.id), "a compare run replays and goes live by its nature")
        }
    }
}
