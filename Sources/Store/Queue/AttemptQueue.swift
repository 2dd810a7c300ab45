import Foundation
import Logging
import OrchestrateModel
import PostgresNIO

/// The run queue: attempts claimed with `FOR UPDATE SKIP LOCKED`, longest expected first, kept by leases.
///
/// Every method is one statement (hence one round trip and atomic); no transaction stays open while a
/// scenario runs. A completion counts only under the lease token it was claimed with.
package struct AttemptQueue: Sendable {
    let database: Database
    /// How long a lease lasts without a heartbeat.
    package var lease: Duration
    /// How long a retry keeps off the slot whose attempt failed, so that another free slot takes it (after that any
    /// slot may: a run never waits for a particular one).
    package var retryAvoidance: Duration = .seconds(1)
    /// The verdict (and its reason) a scenario that passed in a single-lane run is stored with as it settles; the
    /// judge then writes only verdicts that differ from it. `nil`: verdicts are left to the judge.
    package var passVerdict: (verdict: Verdict, reason: String)?
    private let planned = PlannedScenarios()

    package init(database: Database, lease: Duration = .seconds(30)) {
        self.database = database
        self.lease = lease
    }

    /// Hands over the scenarios of a run just planned, so that they need not be read back for its claims.
    package func remember(_ plan: RunPlan) {
        planned.remember(
            plan.id,
            Dictionary(
                plan.scenarios.map {
                    ($0.id, PlannedScenarios.Entry(scenario: $0, maxAttempts: plan.retries + 1))
                }, uniquingKeysWith: { first, _ in first }))
    }

    private var leaseMilliseconds: Int64 { lease.wholeMilliseconds }

    /// One round trip: records the results of `round.completions` (each only under its lease token),
    /// queues retries, settles scenarios, and claims the longest expected attempts (never-seen first)
    /// for `round.claimants` — all in one statement.
    ///
    /// A retry avoids the slot whose attempt failed for ``retryAvoidance``, so that another free slot takes it.
    package func round(_ round: QueueRound) async throws -> QueueRoundReply {
        guard let process = round.claimants.first?.worker.process ?? round.completions.first?.claimed.worker.process
        else {
            return QueueRoundReply(acks: [], claimed: [], counts: nil)
        }
        let statement = RoundStatement(
            runID: round.runID, completions: round.completions,
            claimants: round.claimants.map(\.worker.description), owner: process.description,
            leaseMilliseconds: leaseMilliseconds, host: process.host,
            avoidanceMilliseconds: retryAvoidance.wholeMilliseconds,
            passVerdict: passVerdict
        )
        var acks: [Int64: CompletionAck] = [:]
        var claimedRows: [RoundStatement.Row.Claim] = []
        var counts: QueueCounts?
        // The procedure commits before it answers: no transaction of the client's around it.
        for row in try await database.rows(of: statement) {
            for ack in row.acks {
                acks[ack.attemptID] = CompletionAck(
                    accepted: ack.accepted, retryQueued: ack.retryQueued, settled: ack.settled)
            }
            claimedRows += row.claims
            counts = row.counts ?? counts
        }
        var claims: [(attempt: ClaimedAttempt, avoid: String?)] = []
        if !claimedRows.isEmpty {
            let entries = try await planned.entries(
                of: round.runID, including: claimedRows.map(\.scenarioID), database: database)
            let placeholder = round.claimants[0]
            for row in claimedRows {
                guard let entry = entries[row.scenarioID] else {
                    throw StoreError(
                        .unknownRun,
                        "scenario \(row.scenarioID) of run \(round.runID.uuidString.lowercased()) is not planned")
                }
                claims.append(
                    (
                        ClaimedAttempt(
                            id: row.attemptID, runID: round.runID, scenario: entry.scenario, attempt: row.attempt,
                            lane: row.lane, maxAttempts: entry.maxAttempts, leaseToken: row.token,
                            expectedMilliseconds: row.expectedMilliseconds, worker: placeholder.worker,
                            port: placeholder.port, lostHosts: row.lostHosts
                        ), row.avoid
                    ))
            }
        }
        var replyAcks: [CompletionAck] = []
        for (claimed, _) in round.completions {
            let ack = acks[claimed.id] ?? CompletionAck(accepted: false, retryQueued: false, settled: nil)
            if !ack.accepted {
                database.logger.warning(
                    "result discarded: the lease was lost",
                    metadata: ["scenario.id": "\(claimed.scenario.id)", "attempt.number": "\(claimed.attempt)"]
                )
            }
            replyAcks.append(ack)
        }
        var avoiding: [Int64: String] = [:]
        for claim in claims { avoiding[claim.attempt.id] = claim.avoid }
        return QueueRoundReply(
            acks: replyAcks, claimed: Self.assign(claims, to: round.claimants), counts: counts, avoiding: avoiding)
    }

    /// Hands the claimed attempts to the claimants in the order the queue claimed them (the likely failures of a run
    /// that asked for them first, then the longest expected: migration 29), the first to the first, never a retry to
    /// the slot it avoids when another claimant can take it. One attempt per claimant at most.
    static func assign(
        _ ordered: [(attempt: ClaimedAttempt, avoid: String?)], to claimants: [Claimant]
    ) -> [ClaimedAttempt?] {
        var slotOf: [Int] = []  // claimant index per ordered claim
        var free = Array(claimants.indices)
        for claim in ordered {
            let pick = free.firstIndex { claimants[$0].worker.description != claim.avoid } ?? free.startIndex
            slotOf.append(free.remove(at: pick))
        }
        // A claim left on the slot it avoids swaps with one whose slot it may take.
        for i in ordered.indices where claimants[slotOf[i]].worker.description == ordered[i].avoid {
            if let j = ordered.indices.first(where: { j in
                j != i && claimants[slotOf[j]].worker.description != ordered[i].avoid
                    && claimants[slotOf[i]].worker.description != ordered[j].avoid
            }) {
                slotOf.swapAt(i, j)
            }
        }
        var result = [ClaimedAttempt?](repeating: nil, count: claimants.count)
        for (claim, slot) in zip(ordered, slotOf) {
            var attempt = claim.attempt
            attempt.worker = claimants[slot].worker
            attempt.port = claimants[slot].port
            result[slot] = attempt
        }
        return result
    }

    /// Claims the claimable attempt with the longest expected duration for one slot (a one-claim round).
    package func claim(runID: UUID, worker: WorkerIdentity, port: Int) async throws -> ClaimedAttempt? {
        try await round(QueueRound(runID: runID, claimants: [Claimant(worker: worker, port: port)])).claimed[0]
    }

    /// Records the result under the lease, queues a retry when one is due, and settles the scenario
    /// when this was its last word (a one-completion round).
    package func complete(_ claimed: ClaimedAttempt, result: AttemptResult) async throws -> CompletionAck {
        try await round(QueueRound(runID: claimed.runID, completions: [(claimed, result)])).acks[0]
    }

    /// Claims the tests that run in one process with `head` (a test of a batched suite, just claimed): at most `limit`,
    /// expected to take `budgetMilliseconds` together at most, fewer near the end of the run (`slots`: the worker slots
    /// sharing what is queued). Each holds its own lease, under the head's owner.
    package func claimCompanions(
        of head: ClaimedAttempt, limit: Int, slots: Int, budgetMilliseconds: Int64
    ) async throws -> [ClaimedAttempt] {
        guard limit > 0, head.scenario.batch != nil else { return [] }
        let statement = CompanionsStatement(
            runID: head.runID, headID: head.id, headToken: head.leaseToken, limit: Int64(limit),
            slots: Int64(max(slots, 1)),
            budgetMilliseconds: budgetMilliseconds, owner: head.worker.process.description,
            leaseMilliseconds: leaseMilliseconds,
            host: head.worker.host, processes: Int64(head.scenario.batch?.processes ?? 0))
        // The definitions are read in the claim's transaction: a claim whose scenarios cannot be read is not made (a
        // claim tried again would leave the first one's attempts running until their leases expire).
        let (rows, entries) = try await database.withTransaction { connection in
            let rows = try await database.rows(of: statement, on: connection)
            let entries =
                rows.isEmpty
                ? [:]
                : try await planned.entries(
                    of: head.runID, including: rows.map(\.scenarioID), database: database, on: connection)
            return (rows, entries)
        }
        guard !rows.isEmpty else { return [] }
        return try rows.sorted { $0.attemptID < $1.attemptID }.map { row in
            guard let entry = entries[row.scenarioID] else {
                throw StoreError(
                    .unknownRun,
                    "scenario \(row.scenarioID) of run \(head.runID.uuidString.lowercased()) is not planned")
            }
            return ClaimedAttempt(
                id: row.attemptID, runID: head.runID, scenario: entry.scenario, attempt: row.attempt,
                maxAttempts: entry.maxAttempts, leaseToken: row.token, expectedMilliseconds: row.expectedMilliseconds,
                worker: head.worker, port: head.port, lostHosts: row.lostHosts)
        }
    }

    /// Puts a claimed attempt back in the queue without a result (the run was interrupted).
    @discardableResult
    package func release(_ claimed: ClaimedAttempt) async throws -> Bool {
        try await requeue(attemptID: claimed.id, token: claimed.leaseToken)
    }

    /// Puts an attempt back in the queue if `token` still holds its lease; `solo`: to run alone (it was in a batch
    /// whose process ended before reporting it).
    @discardableResult
    package func requeue(attemptID: Int64, token: UUID, solo: Bool = false) async throws -> Bool {
        var binds = PostgresBindings()
        binds.append(attemptID)
        binds.append(token)
        return try await abandon(where: "id = $1 AND lease_token = $2", binds, solo: solo) > 0
    }

    /// Extends the leases of the attempts a process is running; returns the tokens whose leases it still holds (a lease
    /// that expired was taken back, and its attempt belongs to someone else now).
    package func heartbeat(_ attempts: [ClaimedAttempt]) async throws -> Set<UUID> {
        guard !attempts.isEmpty else { return [] }
        // Each lease is a lookup by its attempt's key. Found by token among the running attempts instead, a beat read the
        // partial index of running attempts whole: every run's, with an entry left by every attempt that ran since the
        // table was last vacuumed. `state || ''` keeps the planner off that index.
        let rows = try await database.client.query(
            """
            UPDATE attempts a SET lease_expires_at = now() + \(leaseMilliseconds) * interval '1 millisecond'
            FROM unnest(\(attempts.map(\.id))::bigint[], \(attempts.map(\.leaseToken))::uuid[]) AS l(id, token)
            WHERE a.id = l.id AND a.lease_token = l.token AND a.state || '' = 'running'
            RETURNING a.lease_token
            """,
            logger: database.logger
        )
        var held = Set<UUID>()
        for try await token in rows.decode(UUID.self) { held.insert(token) }
        return held
    }

    /// Requeues the run's attempts whose lease expired (their worker died, or its host did or lost the database); each
    /// new attempt carries the hosts its scenario was lost on (``ClaimedAttempt/lostHosts``).
    @discardableResult
    package func reapExpired(runID: UUID) async throws -> Int {
        var binds = PostgresBindings()
        binds.append(runID)
        return try await abandon(where: "run_id = $1 AND lease_expires_at < now()", binds, hostLost: true)
    }

    /// Gives back the run's attempts leased by `owner` whose tokens are not in `keeping` (claims whose answer was
    /// lost): each is abandoned and followed by a new queued attempt with its number. Returns how many.
    @discardableResult
    package func releaseOrphans(runID: UUID, owner: String, keeping tokens: [UUID]) async throws -> Int {
        var binds = PostgresBindings()
        binds.append(runID)
        binds.append(owner)
        binds.append(tokens)
        return try await abandon(where: "run_id = $1 AND lease_owner = $2 AND NOT (lease_token = ANY($3))", binds)
    }

    /// Back to the queue, for a requeue under a lease, the reaper and lost claims: the running attempts `condition`
    /// selects (SQL whose `$1`… are `binds`) are abandoned and followed by new queued attempts with the same numbers
    /// (no retry is spent), so that what an execution logged stays with its own row. Returns how many. `hostLost`: the
    /// execution's host vanished (its lease expired), which the new attempt remembers. `solo`: the new attempt runs
    /// alone (``requeue(attemptID:token:solo:)``); otherwise it runs as the abandoned one would have.
    private func abandon(
        where condition: String, _ binds: PostgresBindings, hostLost: Bool = false, solo: Bool = false
    ) async throws -> Int {
        let sql = """
            WITH gone AS (
                UPDATE attempts SET state = 'abandoned', finished_at = now(), lease_expires_at = NULL
                WHERE state = 'running' AND \(condition)
                RETURNING run_id, project, scenario_id, attempt, mode, expected_ms, requeues, lost_hosts, host, solo, probe, rank
            )
            INSERT INTO attempts (run_id, project, scenario_id, attempt, mode, expected_ms, requeues, lost_hosts, solo, probe, rank)
            SELECT run_id, project, scenario_id, attempt, mode, expected_ms, requeues + 1,
                   \(hostLost ? "lost_hosts || coalesce(host, '?')" : "lost_hosts"), \(solo ? "true" : "solo"), probe, rank
            FROM gone
            RETURNING id
            """
        let rows = try await database.client.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: database.logger)
        var count = 0
        for try await _ in rows { count += 1 }
        return count
    }

    /// The leases currently held in a run.
    package func leaseHolders(runID: UUID) async throws -> [LeaseHolder] {
        let rows = try await database.client.query(
            "SELECT id, lease_token, lease_owner FROM attempts WHERE run_id = \(runID) AND state = 'running'",
            logger: database.logger
        )
        var holders: [LeaseHolder] = []
        for try await (id, token, owner) in rows.decode((Int64, UUID, String).self) {
            holders.append(LeaseHolder(attemptID: id, token: token, owner: owner))
        }
        return holders
    }

    /// How many attempts of the run are queued and running.
    package func counts(runID: UUID) async throws -> QueueCounts {
        let (queued, running) = try await database.rows(of: CountsStatement(runID: runID)).first ?? (0, 0)
        return QueueCounts(queued: Int(queued), running: Int(running))
    }
}
