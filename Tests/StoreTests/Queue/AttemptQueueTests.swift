import Foundation
import OrchestrateModel
import OrchestrateTesting
import PostgresNIO
import Store
import Synchronization
import Testing

/// A run of `count` scenarios named s0…, planned in a fresh database.
func plan(_ database: Database, count: Int, retries: Int = 0, id: UUID = UUID()) async throws -> UUID {
    let scenarios = (0..<count).map {
        Scenario(id: "s\($0)", name: "scenario \($0)", command: "true", timeoutMilliseconds: 60_000)
    }
    try await RunStore(database: database).create(
        RunPlan(
            id: id, host: "test", gitRevision: nil, workingDirectory: "/tmp", configPath: nil, mode: .replay,
            workers: 1,
            retries: retries, scenarios: scenarios
        ))
    return id
}

func passed(_ milliseconds: Int64 = 1) -> AttemptResult {
    AttemptResult(outcome: .passed, durationMilliseconds: milliseconds)
}

/// One exchange for each of the attempts `attemptIDs` (a replayed `GET api.example.com/items` answered 200), at its start.
func storeExchanges(madeBy attemptIDs: [Int64], on database: Database) async throws {
    try await database.client.query(
        """
        INSERT INTO exchanges (attempt_id, sequence, mode, matched, host, method, url, status, started_at)
        SELECT a.id, 1, 'replay', true, 'api.example.com', 'GET', '/items', 200, coalesce(a.started_at, now())
        FROM attempts a WHERE a.id = ANY(\(attemptIDs))
        """)
}

final class ClaimLog: Sendable {
    let counts = Mutex<[String: Int]>([:])
}

@Suite("Attempt queue")
struct AttemptQueueTests {
    // The limit guards against a hang: 400 statements take seconds alone and far longer beside the whole suite and
    // stress-ng on two cores.
    @Test("an attempt is claimed once under contention from many slots", .timeLimit(.minutes(5)))
    func contention() async throws {
        try await withTestDatabase { database in
            let runID = try await plan(database, count: 200)
            let queue = AttemptQueue(database: database)
            let claims = ClaimLog()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for slot in 1...16 {
                    group.addTask {
                        let worker = WorkerIdentity(host: "host-\(slot % 3)", pid: 1000 + Int32(slot), slot: slot)
                        while let claimed = try await queue.claim(runID: runID, worker: worker, port: 1) {
                            claims.counts.withLock { $0[claimed.scenario.id, default: 0] += 1 }
                            let ack = try await queue.complete(claimed, result: passed())
                            #expect(ack.accepted)
                        }
                    }
                }
                try await group.waitForAll()
            }
            let counts = claims.counts.withLock { $0 }
            #expect(counts.count == 200)
            #expect(counts.values.allSatisfy { $0 == 1 })
            #expect(try await queue.counts(runID: runID).isDrained)
            let summary = try #require(try await RunStore(database: database).summary(runID))
            #expect(summary.passed == 200)
        }
    }

    @Test("a late completion with a lost lease never overwrites the attempt that replaced it")
    func fence() async throws {
        try await withTestDatabase { database in
            let runID = try await plan(database, count: 1)
            let queue = AttemptQueue(database: database, lease: .milliseconds(200))
            let dead = WorkerIdentity(host: "gone", pid: 1, slot: 1)
            let stale = try #require(try await queue.claim(runID: runID, worker: dead, port: 1))
            // Once the lease has expired, the reaper takes the attempt back.
            #expect(try await eventually { try await queue.reapExpired(runID: runID) == 1 })
            let fresh = try #require(
                try await queue.claim(runID: runID, worker: WorkerIdentity(host: "alive", pid: 2, slot: 1), port: 2))
            // The attempt went back as a new row with the same number: the stale execution keeps its own.
            #expect(fresh.id != stale.id && fresh.attempt == stale.attempt)
            #expect(fresh.leaseToken != stale.leaseToken)
            let late = try await queue.complete(
                stale, result: AttemptResult(outcome: .failed, exitCode: 1, durationMilliseconds: 5))
            #expect(!late.accepted)
            let current = try await queue.complete(fresh, result: passed())
            #expect(current.accepted)
            #expect(current.settled == .passed)
            let report = try await RunStore(database: database).report(runID)
            #expect(report.scenarios[0].attempts.count == 1)
            #expect(report.scenarios[0].attempts[0].outcome == .passed)
        }
    }

    /// PostgreSQL answers a statement's rows before it commits it (at the protocol's Sync), and a commit can still fail
    /// then: a server that cannot write its WAL (a full disk) dies there. A result acknowledged from such rows was never
    /// recorded, and a claim handed out from them was never made.
    @Test(
        "a round whose commit fails is not acknowledged: no result taken as recorded, no claim handed out",
        .timeLimit(.minutes(2)))
    func commitFails() async throws {
        try await withTestDatabase { database in
            let runID = try await plan(database, count: 2)
            let queue = AttemptQueue(database: database)
            let worker = WorkerIdentity(host: "h", pid: 1, slot: 1)
            let claimed = try #require(try await queue.claim(runID: runID, worker: worker, port: 1))
            // A check that runs only at commit, after the statement has answered with its rows.
            try await database.client.query(
                """
                CREATE FUNCTION refuse_at_commit() RETURNS trigger LANGUAGE plpgsql AS
                    $$ BEGIN RAISE EXCEPTION 'refused at commit'; END $$
                """,
                logger: database.logger)
            try await database.client.query(
                """
                CREATE CONSTRAINT TRIGGER refuse_at_commit AFTER UPDATE ON attempts
                    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_at_commit()
                """,
                logger: database.logger)
            await #expect(throws: (any Error).self) {
                try await queue.round(
                    QueueRound(
                        runID: runID, completions: [(claimed, passed())],
                        claimants: [Claimant(worker: worker, port: 1)]))
            }
            try await database.client.query("DROP TRIGGER refuse_at_commit ON attempts", logger: database.logger)
            // Nothing of the round was kept: the attempt still runs under its lease, the other is still queued.
            let counts = try await queue.counts(runID: runID)
            #expect(counts.running == 1 && counts.queued == 1, "\(counts)")
            #expect(try await queue.complete(claimed, result: passed()).accepted)
        }
    }

    @Test("a round whose claim cannot commit keeps its results, and sent again they are acknowledged as recorded")
    func claimCommitFails() async throws {
        try await withTestDatabase { database in
            let runID = try await plan(database, count: 2, retries: 1)
            let queue = AttemptQueue(database: database)
            let worker = WorkerIdentity(host: "h", pid: 1, slot: 1)
            let claimed = try #require(try await queue.claim(runID: runID, worker: worker, port: 1))
            // Refuses at commit an attempt leased to run, and nothing else: the round's claim, not its results.
            try await database.client.query(
                """
                CREATE FUNCTION refuse_claims() RETURNS trigger LANGUAGE plpgsql AS
                    $$ BEGIN
                        IF NEW.state = 'running' THEN RAISE EXCEPTION 'claim refused at commit'; END IF;
                        RETURN NULL;
                    END $$
                """,
                logger: database.logger)
            try await database.client.query(
                """
                CREATE CONSTRAINT TRIGGER refuse_claims AFTER UPDATE ON attempts
                    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_claims()
                """,
                logger: database.logger)
            let failed = AttemptResult(outcome: .failed, exitCode: 1, durationMilliseconds: 2)
            let round = QueueRound(
                runID: runID, completions: [(claimed, failed)], claimants: [Claimant(worker: worker, port: 1)])
            await #expect(throws: (any Error).self) { try await queue.round(round) }
            try await database.client.query("DROP TRIGGER refuse_claims ON attempts", logger: database.logger)
            // The result was recorded and its retry queued; the claim was not kept.
            #expect(try await queue.counts(runID: runID) == QueueCounts(queued: 2, running: 0))
            // The same round sent again: its result is acknowledged as the one recorded, with the retry it queued.
            let again = try await queue.round(round)
            #expect(again.acks.map(\.accepted) == [true])
            #expect(again.acks.first?.retryQueued == true)
            #expect(again.claimed.compactMap { $0 }.count == 1)
        }
    }

    @Test("heartbeats keep a lease that would otherwise expire")
    func heartbeat() async throws {
        try await withTestDatabase { database in
            let runID = try await plan(database, count: 1)
            // Five beats 400 ms apart outlast the 1 s lease; the slack leaves room for a busy machine.
            let queue = AttemptQueue(database: database, lease: .seconds(1))
            let claimed = try #require(
                try await queue.claim(runID: runID, worker: WorkerIdentity(host: "h", pid: 1, slot: 1), port: 1))
            try await paced(every: .milliseconds(400), times: 5) { _ in
                let held = try await queue.heartbeat([claimed])
                #expect(held == [claimed.leaseToken])
                #expect(try await queue.reapExpired(runID: runID) == 0)
            }
            #expect(try await queue.complete(claimed, result: passed()).accepted)
        }
    }

    @Test("a heartbeat renews a lease only with its attempt and token, and not once the attempt is done")
    func heartbeatNeedsAttemptAndToken() async throws {
        try await withTestDatabase { database in
            let runID = try await plan(database, count: 2)
            let queue = AttemptQueue(database: database)
            let first = try #require(
                try await queue.claim(runID: runID, worker: WorkerIdentity(host: "h", pid: 1, slot: 1), port: 1))
            let second = try #require(
                try await queue.claim(runID: runID, worker: WorkerIdentity(host: "h", pid: 1, slot: 2), port: 2))
            var crossed = first
            crossed.leaseToken = second.leaseToken
            #expect(try await queue.heartbeat([crossed]).isEmpty)
            #expect(try await queue.heartbeat([first, second]) == [first.leaseToken, second.leaseToken])
            #expect(try await queue.complete(first, result: passed()).accepted)
            #expect(try await queue.heartbeat([first, second]) == [second.leaseToken])
            #expect(try await queue.heartbeat([]).isEmpty)
        }
    }

    @Test("a drained run's judgement goes to one member, and to none while an attempt is queued or running")
    func judgementOnceDrained() async throws {
        try await withTestDatabase { database in
            let runID = try await plan(database, count: 2)
            let (queue, runs) = (AttemptQueue(database: database), RunStore(database: database))
            #expect(try await !runs.claimJudgement(runID, by: "h/1"), "two attempts are queued")
            let first = try #require(
                try await queue.claim(runID: runID, worker: WorkerIdentity(host: "h", pid: 1, slot: 1), port: 1))
            let second = try #require(
                try await queue.claim(runID: runID, worker: WorkerIdentity(host: "h", pid: 1, slot: 2), port: 2))
            #expect(try await queue.complete(first, result: passed()).accepted)
            #expect(try await !runs.claimJudgement(runID, by: "h/1"), "an attempt is running")
            #expect(try await queue.complete(second, result: passed()).accepted)
            #expect(try await runs.claimJudgement(runID, by: "h/1"))
            #expect(try await !runs.claimJudgement(runID, by: "h/2"), "the run is judged by h/1 already")
        }
    }

    @Test("a failure queues a retry that another slot takes; a pass then makes the scenario flaky")
    func retryBecomesFlaky() async throws {
        try await withTestDatabase { database in
            let runID = try await plan(database, count: 1, retries: 2)
            var queue = AttemptQueue(database: database)
            queue.retryAvoidance = .seconds(60)  // not outlasted by a busy machine between the calls below
            let first = WorkerIdentity(host: "h", pid: 1, slot: 1), second = WorkerIdentity(host: "h", pid: 1, slot: 2)
            let attempt1 = try #require(try await queue.claim(runID: runID, worker: first, port: 1))
            let ack1 = try await queue.complete(
                attempt1, result: AttemptResult(outcome: .failed, exitCode: 1, durationMilliseconds: 3))
            #expect(ack1.retryQueued)
            #expect(ack1.settled == nil)
            // The slot that failed does not get the retry while the avoidance lasts; another slot does.
            #expect(try await queue.claim(runID: runID, worker: first, port: 1) == nil)
            let attempt2 = try #require(try await queue.claim(runID: runID, worker: second, port: 2))
            #expect(attempt2.attempt == 2)
            let ack2 = try await queue.complete(attempt2, result: passed())
            #expect(!ack2.retryQueued)
            #expect(ack2.settled == .flaky)
        }
    }

    @Test(
        "a failure that reproduces is not retried and settles failed at once, with retries left; its evidence is stored, and sent again it is acknowledged as it was"
    )
    func reproducingFailure() async throws {
        try await withTestDatabase { database in
            let runID = try await plan(database, count: 2, retries: 2)
            let queue = AttemptQueue(database: database)
            let worker = WorkerIdentity(host: "h", pid: 1, slot: 1)
            let own = try #require(try await queue.claim(runID: runID, worker: worker, port: 1))
            var reproduces = AttemptResult(outcome: .failed, exitCode: 1, durationMilliseconds: 3)
            reproduces.reproduces = true
            let ack = try await queue.complete(own, result: reproduces)
            #expect(!ack.retryQueued && ack.settled == .failed)
            #expect(try await queue.complete(own, result: reproduces).settled == .failed, "sent again")
            let outage = try #require(try await queue.claim(runID: runID, worker: worker, port: 1))
            var evidence = AttemptResult(outcome: .failed, exitCode: 22, durationMilliseconds: 3)
            evidence.evidence = "GET api.test/v1/x → 503"
            let retried = try await queue.complete(outage, result: evidence)
            #expect(retried.retryQueued && retried.settled == nil)
            let stored = try await RunStore(database: database).attemptRecords(runID)
            #expect(stored.compactMap(\.evidence) == ["GET api.test/v1/x → 503"])
            #expect(stored.count == 3, "the reproducing failure's one attempt, the outage's and its retry")
        }
    }

    @Test("one round records several results and hands out claims, never a retry to the slot that failed it")
    func round() async throws {
        try await withTestDatabase { database in
            let runID = try await plan(database, count: 4, retries: 1)
            var queue = AttemptQueue(database: database)
            // Long enough that a busy machine does not outlast it between the rounds below.
            queue.retryAvoidance = .seconds(60)
            let slot1 = Claimant(worker: WorkerIdentity(host: "h", pid: 7, slot: 1), port: 1001)
            let slot2 = Claimant(worker: WorkerIdentity(host: "h", pid: 7, slot: 2), port: 1002)
            let first = try await queue.round(QueueRound(runID: runID, claimants: [slot1, slot2]))
            let (a, b) = (try #require(first.claimed[0]), try #require(first.claimed[1]))
            #expect(a.worker == slot1.worker && a.port == 1001 && b.worker == slot2.worker && b.port == 1002)
            #expect(Set([a.scenario.id, b.scenario.id]).count == 2)
            // Slot 1 failed, slot 2 passed; both ask again in the same round.
            let second = try await queue.round(
                QueueRound(
                    runID: runID,
                    completions: [
                        (a, AttemptResult(outcome: .failed, exitCode: 1, durationMilliseconds: 2)), (b, passed()),
                    ],
                    claimants: [slot1, slot2]
                ))
            #expect(second.acks.map(\.accepted) == [true, true])
            #expect(second.acks[0].retryQueued && second.acks[0].settled == nil)
            #expect(second.acks[1].settled == .passed)
            #expect(second.claimed.compactMap { $0 }.count == 2)
            // The retry comes after the scenarios never run (never-seen ones are claimed first), and slot 1 alone never
            // gets it.
            let alone = try await queue.round(QueueRound(runID: runID, claimants: [slot1]))
            #expect(alone.claimed == [nil])
            #expect(alone.counts == QueueCounts(queued: 1, running: 2))
            let both = try await queue.round(QueueRound(runID: runID, claimants: [slot1, slot2]))
            let retry = try #require(both.claimed.compactMap { $0 }.first { $0.attempt == 2 })
            #expect(retry.scenario.id == a.scenario.id)
            #expect(retry.worker == slot2.worker)
            // The round's record: the worker and port that ran each finished attempt.
            let report = try await RunStore(database: database).report(runID)
            let failed = try #require(report.scenarios.first { $0.scenario.id == a.scenario.id }?.attempts.first)
            #expect(failed.worker == slot1.worker.description)
        }
    }

    @Test("the lanes of a compare run's scenario finishing in one round settle it once, with the worse result")
    func lanesSettleOnce() async throws {
        try await withTestDatabase { database in
            let runID = UUID()
            let scenarios = [Scenario(id: "s0", name: "scenario 0", command: "true", timeoutMilliseconds: 60_000)]
            try await RunStore(database: database).create(
                RunPlan(
                    id: runID, host: "test", gitRevision: nil, workingDirectory: "/tmp", configPath: nil,
                    mode: .compare, workers: 2,
                    retries: 0, scenarios: scenarios
                ))
            let queue = AttemptQueue(database: database)
            let slots = (1...2).map { Claimant(worker: WorkerIdentity(host: "h", pid: 7, slot: $0), port: 1000 + $0) }
            let claimed = try await queue.round(QueueRound(runID: runID, claimants: slots)).claimed.compactMap { $0 }
            #expect(Set(claimed.compactMap(\.lane)) == [.replay, .live])
            let results = claimed.map {
                (
                    $0,
                    $0.lane == .live ? AttemptResult(outcome: .failed, exitCode: 1, durationMilliseconds: 2) : passed()
                )
            }
            let reply = try await queue.round(QueueRound(runID: runID, completions: results))
            #expect(reply.acks.map(\.accepted) == [true, true])
            #expect(reply.acks.compactMap(\.settled) == [.failed], "one settlement for the scenario: \(reply.acks)")
        }
    }

    @Test("a round of a whole batch's results says of each whether it was retried and how its scenario settled")
    func batchRound() async throws {
        try await withTestDatabase { database in
            let count = 150
            let runID = try await plan(database, count: count, retries: 1)
            let queue = AttemptQueue(database: database)
            let slots = (1...count).map { Claimant(worker: WorkerIdentity(host: "h", pid: 7, slot: $0), port: $0) }
            let claimed = try await queue.round(QueueRound(runID: runID, claimants: slots)).claimed.compactMap { $0 }
            #expect(claimed.count == count)
            // Every third fails; the others pass at once. An earlier result sent again is accepted as it was.
            let failing = Set(claimed.enumerated().filter { $0.offset % 3 == 0 }.map(\.element.scenario.id))
            let results = claimed.map {
                (
                    $0,
                    failing.contains($0.scenario.id)
                        ? AttemptResult(outcome: .failed, exitCode: 1, durationMilliseconds: 2) : passed()
                )
            }
            let reply = try await queue.round(QueueRound(runID: runID, completions: results))
            #expect(reply.acks.count == count && reply.acks.allSatisfy(\.accepted))
            for (index, ack) in reply.acks.enumerated() {
                let failed = failing.contains(claimed[index].scenario.id)
                #expect(ack.retryQueued == failed, "\(claimed[index].scenario.id): \(ack)")
                #expect(ack.settled == (failed ? nil : .passed), "\(claimed[index].scenario.id): \(ack)")
            }
            let again = try await queue.round(QueueRound(runID: runID, completions: Array(results.prefix(3))))
            #expect(again.acks.map(\.accepted) == [true, true, true])
            #expect(again.acks.map(\.retryQueued) == [true, false, false])
            #expect(again.acks.map(\.settled) == [nil, .passed, .passed])
            #expect(try await queue.counts(runID: runID) == QueueCounts(queued: failing.count, running: 0))
        }
    }

    @Test("failing every attempt settles the scenario as failed after retries")
    func exhaustedRetries() async throws {
        try await withTestDatabase { database in
            let runID = try await plan(database, count: 1, retries: 1)
            var queue = AttemptQueue(database: database)
            queue.retryAvoidance = .milliseconds(100)
            var acks: [CompletionAck] = []
            for slot in 1...2 {
                // The same slot asking alone gets the retry once its avoidance of the failing slot is over.
                let claimed = try #require(
                    try await eventuallyValue {
                        try await queue.claim(
                            runID: runID, worker: WorkerIdentity(host: "h", pid: 1, slot: 1), port: slot)
                    })
                acks.append(
                    try await queue.complete(
                        claimed, result: AttemptResult(outcome: .timedOut, durationMilliseconds: 9)))
            }
            #expect(acks.map(\.retryQueued) == [true, false])
            #expect(acks.last?.settled == .failed)
            #expect(try await queue.counts(runID: runID).isDrained)
        }
    }

    @Test("the longest expected scenario is claimed first, never-seen ones before all")
    func longestFirst() async throws {
        try await withTestDatabase { database in
            let store = RunStore(database: database)
            let queue = AttemptQueue(database: database)
            let worker = WorkerIdentity(host: "h", pid: 1, slot: 1)
            // History: s0 = 10 ms, s1 = 300 ms, s2 = 50 ms (median of several), s3 never ran.
            let history = try await plan(database, count: 3)
            let durations: [String: [Int64]] = ["s0": [10], "s1": [300], "s2": [40, 50, 900]]
            while let claimed = try await queue.claim(runID: history, worker: worker, port: 1) {
                _ = try await queue.complete(claimed, result: passed(durations[claimed.scenario.id]![0]))
            }
            for extra in [50, 900] as [Int64] {
                let again = try await plan(database, count: 3)
                while let claimed = try await queue.claim(runID: again, worker: worker, port: 1) {
                    _ = try await queue.complete(
                        claimed,
                        result: passed(claimed.scenario.id == "s2" ? extra : durations[claimed.scenario.id]![0]))
                }
            }
            #expect(
                try await store.expectedDurations(["s0", "s1", "s2", "s3"], project: RunStore.defaultProject) == [
                    "s0": 10, "s1": 300, "s2": 50,
                ])
            let next = try await plan(database, count: 4)
            var order: [String] = []
            while let claimed = try await queue.claim(runID: next, worker: worker, port: 1) {
                order.append(claimed.scenario.id)
                _ = try await queue.complete(claimed, result: passed())
            }
            #expect(order == ["s3", "s1", "s2", "s0"])
        }
    }
}
