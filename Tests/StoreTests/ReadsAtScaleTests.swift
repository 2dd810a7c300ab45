import Foundation
import OrchestrateModel
import OrchestrateTesting
import PostgresNIO
import Store
import Testing

/// A database that has kept months of history still answers one run by that run's rows: no statement on a run's path
/// reads every stored attempt (each did once — a compare run's claims, the claim of its judgement, the judge's history
/// of failing tests, the hosts' shares, the quarantine's scores — and took seconds to minutes with a million attempts
/// stored).
@Suite("Reads at scale")
struct ReadsAtScaleTests {
    /// Rows of `attempts`, `run_scenarios` and `exchanges` read so far, by sequential scans and as entries of their
    /// indexes (an index-only walk of a whole index counts), as the statistics say once this connection's are in.
    static func rowsRead(_ database: Database) async throws -> Int64 {
        try await database.client.query("SELECT pg_stat_force_next_flush()")
        try await database.client.query("SELECT pg_stat_clear_snapshot()")
        let rows = try await database.client.query(
            """
            SELECT ((SELECT coalesce(sum(seq_tup_read), 0) FROM pg_stat_user_tables
                     WHERE relname IN ('attempts', 'run_scenarios', 'exchanges'))
                 + (SELECT coalesce(sum(idx_tup_read), 0) FROM pg_stat_user_indexes
                    WHERE relname IN ('attempts', 'run_scenarios', 'exchanges')))::bigint
            """)
        for try await read in rows.decode(Int64.self) { return read }
        return 0
    }

    /// Requires PostgreSQL 15 or newer, whose statistics are read at once (`pg_stat_force_next_flush`).
    static func requireStatisticsAtOnce(_ database: Database) async throws {
        var version = 0
        for try await number in try await database.client.query("SELECT current_setting('server_version_num')::int")
            .decode(Int.self)
        {
            version = number
        }
        try #require(version >= 150_000, "PostgreSQL 15 or newer runs this test; the server is \(version)")
    }

    /// A fresh database of one connection, so that every statement is this session's and so are the statistics read
    /// after them, on a server whose statistics are read at once.
    static func withCountedReads(_ body: @Sendable (Database, RunStore) async throws -> Void) async throws {
        try await withTestDatabase(maximumConnections: 1) { database in
            try await requireStatisticsAtOnce(database)
            try await body(database, RunStore(database: database))
        }
    }

    /// `count` scenarios that run `true`, with ids and names `prefix0`….
    static func noOps(_ prefix: String, count: Int) -> [Scenario] {
        (0..<count).map {
            Scenario(id: "\(prefix)\($0)", name: "\(prefix)\($0)", command: "true", timeoutMilliseconds: 1000)
        }
    }

    /// A run of `scenarios` on revision r1, in `project` when given.
    static func plan(
        _ scenarios: [Scenario], mode: Mode = .replay, workers: Int = 8, project: String? = nil
    ) -> RunPlan {
        var plan = RunPlan(
            host: "test", gitRevision: "r1", workingDirectory: "/tmp", configPath: nil, mode: mode, workers: workers,
            retries: 0, scenarios: scenarios)
        if let project { plan.project = project }
        return plan
    }

    /// Fresh statistics of `tables`, as a database that has kept its history has them.
    static func analyze(_ tables: String..., on database: Database) async throws {
        for table in tables { try await database.client.query("ANALYZE \(unescaped: table)") }
    }

    /// `count` finished copies of the stored run `run`, 9 minutes apart going back from now (ids `md5('copy' || n)`):
    /// each of its scenarios run once, passed, but for one attempt in `failingEvery` when given.
    static func storeCopies(of run: RunPlan, count: Int, failingEvery: Int = 0, on database: Database) async throws {
        try await database.client.query(
            """
            INSERT INTO runs (id, created_at, finished_at, state, host, git_revision, working_directory, mode, workers,
                              retries, scenario_count, project)
            SELECT md5('copy' || g)::uuid, now() - g * interval '9 minutes', now() - g * interval '9 minutes' + interval '1 minute',
                   'finished', 'test', 'r1', '/tmp', 'replay', 8, 0, \(run.scenarios.count), \(run.project)
            FROM generate_series(1, \(count)) g
            """)
        try await database.client.query(
            """
            INSERT INTO run_scenarios (run_id, project, scenario_id, position, command, timeout_ms, env, tags, max_attempts,
                                       lane_count, result)
            SELECT md5('copy' || g)::uuid, rs.project, rs.scenario_id, rs.position, rs.command, rs.timeout_ms, rs.env,
                   rs.tags, rs.max_attempts, rs.lane_count, 'passed'
            FROM run_scenarios rs, generate_series(1, \(count)) g WHERE rs.run_id = \(run.id)
            """)
        try await database.client.query(
            """
            INSERT INTO attempts (run_id, project, scenario_id, attempt, state, outcome, duration_ms, started_at,
                                  finished_at, worker, lease_owner)
            SELECT md5('copy' || g)::uuid, rs.project, rs.scenario_id, 1, 'finished',
                   CASE WHEN \(failingEvery) <= 0 THEN 'passed'
                        WHEN (g + rs.position) % \(failingEvery) = 0 THEN 'failed' ELSE 'passed' END, 5,
                   now() - g * interval '9 minutes', now() - g * interval '9 minutes' + interval '30 seconds',
                   'test/1/1', 'test/1'
            FROM run_scenarios rs, generate_series(1, \(count)) g WHERE rs.run_id = \(run.id)
            """)
    }

    @Test(
        "with 60,000 attempts of earlier runs stored, a compare run's claims, its new tests, its judge's history of failing tests, its hosts' shares and its quarantine scores read the rows they need, not every attempt"
    )
    func ownRowsOnly() async throws {
        try await Self.withCountedReads { database, runs in
            let history = Self.plan(Self.noOps("h", count: 200), project: "other")
            try await runs.create(history)
            // Another suite's run copied 300 times over the last two days, finished, one attempt in 50 failed.
            try await Self.storeCopies(of: history, count: 300, failingEvery: 50, on: database)
            try await Self.analyze("attempts", "run_scenarios", "runs", on: database)

            // This suite's own history: three runs of its 10 scenarios on the revision, in the last hour, the third
            // scenario failing each time.
            let scenarios = Self.noOps("c", count: 10)
            for earlier in 1...3 {
                let run = Self.plan(scenarios, workers: 2, project: "compare")
                try await runs.create(run)
                try await database.client.query(
                    """
                    UPDATE attempts SET state = 'finished', outcome = CASE WHEN scenario_id = 'c2' THEN 'failed' ELSE 'passed' END,
                        duration_ms = 5, worker = 'test/1/1', started_at = now() - \(earlier * 10) * interval '1 minute',
                        finished_at = now() - \(earlier * 10) * interval '1 minute'
                    WHERE run_id = \(run.id)
                    """)
                try await runs.setState(run.id, .finished)
            }
            try await Self.analyze("attempts", on: database)

            // The run: a compare run of them, a replay and a live lane each, its live lanes failing.
            let plan = Self.plan(scenarios, mode: .compare, workers: 2, project: "compare")
            try await runs.create(plan)
            try await runs.join(plan.id, member: "test/7", host: "test", node: "test", workers: 2)
            let before = try await Self.rowsRead(database)
            #expect(before >= 0)

            // One slot asking at a time: each claim looks for the scenario's other lane on that slot.
            let queue = AttemptQueue(database: database)
            let slots = (1...2).map {
                Claimant(worker: WorkerIdentity(host: "test", pid: 7, slot: $0), port: 1000 + $0)
            }
            var finished = 0
            var pending: [(claimed: ClaimedAttempt, result: AttemptResult)] = []
            var rounds = 0
            while finished < 20, rounds < 200 {
                rounds += 1
                let reply = try await queue.round(
                    QueueRound(runID: plan.id, completions: pending, claimants: [slots[rounds % 2]]))
                finished += pending.count
                pending = reply.claimed.compactMap { $0 }.map { claimed in
                    (
                        claimed,
                        claimed.lane == .live
                            ? AttemptResult(outcome: .failed, exitCode: 1, durationMilliseconds: 2)
                            : AttemptResult(outcome: .passed, exitCode: 0, durationMilliseconds: 2)
                    )
                }
            }
            #expect(finished == 20, "every lane of the run ran once: \(finished) in \(rounds) rounds")
            let probes = try await runs.queueNewTestProbes(plan.id, maximumShare: 1)
            #expect(probes.newTests == 0, "each test ran before with its command")
            try await runs.setState(plan.id, .finished)

            let lanes = try await runs.laneHistory(of: plan.id)
            #expect(lanes.count == 10, "each scenario failed its live lane: its history on the revision is read")
            let shares = try await runs.hostShares(plan.id)
            #expect(shares.map(\.finished) == [20], "the run's member finished every lane under its lease")
            // Automatic quarantine's scores over three days: the window's first, partial day is before any of it.
            let scores = try await runs.flakiness(
                project: "compare", since: Date().addingTimeInterval(-259_200), scenarioIDs: plan.scenarios.map(\.id),
                limit: 10, scoresOnly: true)
            #expect(scores.count == 10)

            // What they need is a few hundred rows: the run's own, its scenarios' earlier runs and last attempts on the
            // revision.
            let after = try await Self.rowsRead(database)
            #expect(
                after - before < 10_000, "\(after - before) rows read, of 60,000 attempts and as many scenarios run")
        }
    }

    @Test(
        "with 40,000 attempts of runs of the same size and their 40,000 exchanges stored, and another run under way, the claim of a drained run's judgement and the question whether it made exchanges read that run's rows, not every attempt or exchange"
    )
    func judgementClaimOwnRowsOnly() async throws {
        try await Self.withCountedReads { database, runs in
            func plan() -> RunPlan { Self.plan(Self.noOps("s", count: 2000)) }
            // A run under way, a tenth of its attempts running, and 20 finished copies of it: runs of one size,
            // as a suite's runs are.
            let underWay = plan()
            try await runs.create(underWay)
            try await Self.storeCopies(of: underWay, count: 20, on: database)
            // Each finished attempt made one exchange.
            let finished = try await database.client.query("SELECT id FROM attempts WHERE state = 'finished'")
                .decode(Int64.self).reduce(into: []) { $0.append($1) }
            try await storeExchanges(madeBy: finished, on: database)
            try await database.client.query(
                """
                UPDATE attempts SET state = 'running', lease_owner = 'test/2', lease_token = gen_random_uuid(),
                    lease_expires_at = now() + interval '1 minute', started_at = now()
                WHERE run_id = \(underWay.id) AND scenario_id LIKE '%5'
                """)
            try await Self.analyze("attempts", "run_scenarios", "runs", "exchanges", on: database)

            // The run to judge: every attempt finished, without an exchange.
            let drained = plan()
            try await runs.create(drained)
            try await database.client.query(
                """
                UPDATE attempts SET state = 'finished', outcome = 'passed', duration_ms = 5, worker = 'test/3/1',
                    started_at = now(), finished_at = now()
                WHERE run_id = \(drained.id)
                """)
            #expect(try await !runs.claimJudgement(underWay.id, by: "test/2"), "the run under way has attempts left")
            let before = try await Self.rowsRead(database)
            #expect(try await runs.claimJudgement(drained.id, by: "test/3"))
            #expect(try await !runs.mockTraffic(drained.id))
            let after = try await Self.rowsRead(database)
            #expect(
                after - before < 10_000, "\(after - before) rows read, of 44,000 attempts and 40,000 exchanges stored")
            var copy: UUID?
            for try await id in try await database.client.query("SELECT md5('copy1')::uuid").decode(UUID.self) {
                copy = id
            }
            #expect(try await runs.mockTraffic(try #require(copy)), "a copy's attempts made exchanges")
        }
    }

    @Test(
        "a batch runner's cost counts the tests of the processes of its newest 5 runs, not of its 100 newest processes")
    func runnerCostsNewestRunsOnly() async throws {
        try await Self.withCountedReads { database, runs in
            var scenarios = Self.noOps("b", count: 300)
            for index in scenarios.indices {
                scenarios[index].batch = Batch(command: "runner {ids}", size: 300, milliseconds: 0)
            }
            let run = Self.plan(scenarios, project: "batched")
            try await runs.create(run)
            // 20 earlier runs, one process of 300 tests each (5 ms a test, 100 ms of start-up); run g is g x 9 minutes
            // old, and its process took 1 ms more per test the newer it is: the oldest took least, but only the newest 5
            // count, of which run 5 took least (its process 100 + 300 x 21 ms).
            try await database.client.query(
                """
                INSERT INTO runs (id, created_at, finished_at, state, host, git_revision, working_directory, mode, workers,
                                  retries, scenario_count, project)
                SELECT md5('batched' || g)::uuid, now() - g * interval '9 minutes', now() - g * interval '9 minutes',
                       'finished', 'test', 'r1', '/tmp', 'replay', 8, 0, 300, 'batched'
                FROM generate_series(1, 20) g
                """)
            try await database.client.query(
                """
                INSERT INTO run_scenarios (run_id, project, scenario_id, position, command, timeout_ms, env, tags,
                                           max_attempts, lane_count, result, batch)
                SELECT md5('batched' || g)::uuid, rs.project, rs.scenario_id, rs.position, rs.command, rs.timeout_ms,
                       rs.env, rs.tags, rs.max_attempts, rs.lane_count, 'passed', rs.batch
                FROM run_scenarios rs, generate_series(1, 20) g WHERE rs.run_id = \(run.id)
                """)
            try await database.client.query(
                """
                INSERT INTO attempts (run_id, project, scenario_id, attempt, state, outcome, duration_ms, started_at,
                                      finished_at, worker, lease_owner, host, pid, startup_ms, process_ms)
                SELECT md5('batched' || g)::uuid, rs.project, rs.scenario_id, 1, 'finished', 'passed', 5,
                       now() - g * interval '9 minutes', now() - g * interval '9 minutes' + interval '30 seconds',
                       'test/1/1', 'test/1', 'host', 1000 + g,
                       CASE WHEN rs.position = 0 THEN 100 END, CASE WHEN rs.position = 0 THEN 100 + 300 * (26 - g) END
                FROM run_scenarios rs, generate_series(1, 20) g WHERE rs.run_id = \(run.id)
                """)
            try await Self.analyze("attempts", "run_scenarios", on: database)
            let before = try await Self.rowsRead(database)
            let costs = try await runs.runnerCosts(of: ["runner {ids}"], project: "batched", host: "host")
            let read = try await Self.rowsRead(database) - before
            let cost = try #require(costs["runner {ids}"])
            #expect(cost.startup == 100)
            #expect(cost.perTest == 21, "run 5's process: 300 x 21 ms beyond its start-up for 300 tests")
            #expect(
                cost.concurrency.map { abs($0 - 5.0 / 21) < 1e-9 } == true, "\(String(describing: cost.concurrency))")
            // 5 processes' runs of 300 attempts each to count; all 20 would be 6,000.
            #expect(read < 3_000, "rows read: \(read)")
        }
    }

    @Test("the planner's medians read each test's 20 newest passes once: 100 tests with 30 runs each, about 2,000 rows")
    func mediansReadOnce() async throws {
        try await Self.withCountedReads { database, runs in
            let run = Self.plan(Self.noOps("m", count: 100), project: "medians")
            try await runs.create(run)
            try await Self.storeCopies(of: run, count: 30, on: database)
            try await Self.analyze("attempts", on: database)
            let before = try await Self.rowsRead(database)
            let medians = try await runs.expectedDurations(run.scenarios.map(\.id), project: "medians")
            let read = try await Self.rowsRead(database) - before
            #expect(medians.count == 100 && medians.values.allSatisfy { $0 == 5 }, "\(medians.count) medians")
            // 20 index entries for each test's median; taken twice (in the filter and the answer), 4,000.
            #expect(read <= 2_200, "rows read: \(read)")
        }
    }
}
