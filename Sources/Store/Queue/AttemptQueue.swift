import Foundation
import Logging
import OrchestrateModel
import PostgresNIO

/// The run queue: attempts claimed with `FOR UPDATE SKIP LOCKED`, longest expected first, kept by leases.
///
/// Every method is one statement (hence one round trip and atomic); no transaction stays open while a
/// scenario runs. A completion counts only under the lease token it was claimed with.
public struct AttemptQueue: Sendable {
    let database: Database
    /// How long a lease lasts without a heartbeat.
    public var lease: Duration

    public init(database: Database, lease: Duration = .seconds(30)) {
        self.database = database
        self.lease = lease
    }

    private var leaseMilliseconds: Int64 { lease.wholeMilliseconds }

    /// Back to the queue, without an owner: shared by a requeue under a lease and by the reaper.
    private static let backToQueue = """
        SET state = 'queued', lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL,
            worker = NULL, port = NULL, started_at = NULL, requeues = requeues + 1
        """

    /// Claims the claimable attempt with the longest expected duration (never-seen scenarios first).
    ///
    /// A retry avoids the slot whose attempt failed for a second, so that another free slot takes it.
    public func claim(runID: UUID, worker: WorkerIdentity, port: Int) async throws -> ClaimedAttempt? {
        let statement = ClaimStatement(runID: runID, owner: worker.description, leaseMilliseconds: leaseMilliseconds,
                                       host: worker.host, port: port)
        for try await (id, scenarioID, attempt, token, expected, maxAttempts, command, timeout, env, tags, name, uri, line)
            in try await database.client.execute(statement, logger: database.logger) {
            let environment = env == "{}" ? [:] : (try? JSONDecoder().decode([String: String].self, from: Data(env.utf8))) ?? [:]
            let scenario = Scenario(
                id: scenarioID, name: name, command: command, tags: tags, timeoutMilliseconds: timeout,
                environment: environment, uri: uri, line: line.map(Int.init)
            )
            return ClaimedAttempt(
                id: id, runID: runID, scenario: scenario, attempt: Int(attempt), maxAttempts: Int(maxAttempts),
                leaseToken: token, expectedMilliseconds: expected
            )
        }
        return nil
    }

    /// Records the result under the lease, queues a retry when one is due, and settles the scenario
    /// when this was its last word — all in one statement.
    public func complete(_ claimed: ClaimedAttempt, result: AttemptResult) async throws -> CompletionAck {
        let rows = try await database.client.execute(
            CompleteStatement(attemptID: claimed.id, token: claimed.leaseToken, result: result), logger: database.logger
        )
        for try await (done, retried, settled) in rows {
            if done == 0 {
                database.logger.warning(
                    "result discarded: the lease was lost",
                    metadata: ["scenario.id": "\(claimed.scenario.id)", "attempt.number": "\(claimed.attempt)"]
                )
            }
            return CompletionAck(accepted: done > 0, retryQueued: retried > 0, settled: settled.flatMap(ScenarioResult.init(rawValue:)))
        }
        return CompletionAck(accepted: false, retryQueued: false, settled: nil)
    }

    /// Puts a claimed attempt back in the queue without a result (the run was interrupted).
    @discardableResult
    public func release(_ claimed: ClaimedAttempt) async throws -> Bool {
        try await requeue(attemptID: claimed.id, token: claimed.leaseToken)
    }

    /// Puts an attempt back in the queue if `token` still holds its lease.
    @discardableResult
    public func requeue(attemptID: Int64, token: UUID) async throws -> Bool {
        let rows = try await database.client.query(
            """
            UPDATE attempts \(unescaped: Self.backToQueue)
            WHERE id = \(attemptID) AND lease_token = \(token) AND state = 'running'
            RETURNING id
            """,
            logger: database.logger
        )
        for try await _ in rows { return true }
        return false
    }

    /// Extends the leases of the attempts a process is running.
    public func heartbeat(tokens: [UUID]) async throws {
        guard !tokens.isEmpty else { return }
        try await database.client.query(
            """
            UPDATE attempts SET lease_expires_at = now() + \(leaseMilliseconds) * interval '1 millisecond'
            WHERE lease_token = ANY(\(tokens)) AND state = 'running'
            """,
            logger: database.logger
        )
    }

    /// Requeues the run's attempts whose lease expired (their worker died or lost the database).
    @discardableResult
    public func reapExpired(runID: UUID) async throws -> Int {
        let rows = try await database.client.query(
            """
            UPDATE attempts \(unescaped: Self.backToQueue)
            WHERE run_id = \(runID) AND state = 'running' AND lease_expires_at < now()
            RETURNING id
            """,
            logger: database.logger
        )
        var count = 0
        for try await _ in rows { count += 1 }
        return count
    }

    /// The leases currently held in a run.
    public func leaseHolders(runID: UUID) async throws -> [LeaseHolder] {
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
    public func counts(runID: UUID) async throws -> QueueCounts {
        for try await (queued, running) in try await database.client.execute(CountsStatement(runID: runID), logger: database.logger) {
            return QueueCounts(queued: Int(queued), running: Int(running))
        }
        return QueueCounts(queued: 0, running: 0)
    }
}
