import Foundation
import NIOCore
import OrchestrateModel
import PostgresNIO

/// What a verdict is judged from: a scenario's outcomes per kind of backend, oldest first.
package struct LaneOutcome: Sendable, Hashable {
    /// `replay` for a controlled backend (replay, mock, hybrid), `live` for the real one (live, record).
    package var lane: Mode
    /// The mode it ran in (a record is a live attempt that made the recording).
    package var mode: Mode
    package var passed: Bool
    package var attemptID: Int64
}

/// A scenario's verdict in a run, as stored.
package struct StoredVerdict: Sendable {
    package var scenarioID: String
    package var verdict: Verdict
    package var reason: String
    package var evidence: [NetworkDifference]
    /// The upstream endpoint it is attributed to (`GET api.x.test/v1/carts/{id}`): the one its failing lane's last
    /// failure met, else its first network difference's that can fail a test; `nil` for none.
    package var endpoint: String?

    package init(scenarioID: String, verdict: Verdict, reason: String, evidence: [NetworkDifference]) {
        self.scenarioID = scenarioID
        self.verdict = verdict
        self.reason = reason
        self.evidence = evidence
    }
}

extension RunStore {
    /// The attempts' steps and exchanges (bodies and headers joined back), by attempt id.
    package func networkLogs(_ ids: [Int64]) async throws -> [Int64: NetworkLog] {
        var logs = Dictionary(ids.map { ($0, NetworkLog()) }, uniquingKeysWith: { first, _ in first })
        guard !logs.isEmpty else { return [:] }
        let stepRows = try await database.client.query(
            """
            SELECT attempt_id, position, keyword, name, status, started_at, finished_at, error
            FROM steps WHERE attempt_id = ANY(\(ids)) ORDER BY attempt_id, position
            """,
            logger: database.logger
        )
        for try await row in stepRows {
            let column = NamedColumns(row)
            logs[try column("attempt_id")]?.steps.append(
                Step(
                    position: try column("position"), keyword: try column("keyword"), name: try column("name"),
                    status: StepStatus(rawValue: try column("status")), startedAt: try column("started_at"),
                    finishedAt: try column("finished_at"), error: try column("error")))
        }
        let exchangeRows = try await database.client.query(
            """
            SELECT attempt_id, sequence, mode, matched, host, method, url, request_headers::text AS request_headers,
                   request_body, status, response_headers::text AS response_headers, response_body, started_at,
                   coalesce(duration_us, 0) AS duration_us, note, step
            FROM exchange_log WHERE attempt_id = ANY(\(ids)) ORDER BY attempt_id, sequence
            """,
            logger: database.logger
        )
        let decoder = JSONDecoder()
        for try await row in exchangeRows {
            let column = NamedColumns(row)
            let attemptID: Int64 = try column("attempt_id")
            let (requestHeaders, responseHeaders): (String, String) = (
                try column("request_headers"), try column("response_headers")
            )
            logs[attemptID]?.exchanges.append(
                Exchange(
                    sequence: try column("sequence"), mode: Mode(rawValue: try column("mode")) ?? .replay,
                    matched: try column("matched"), host: try column("host"), method: try column("method"),
                    url: try column("url"),
                    requestHeaders: (try? decoder.decode([Exchange.Header].self, from: Data(requestHeaders.utf8)))
                        ?? [],
                    requestBody: Array(buffer: try column("request_body", as: ByteBuffer.self)),
                    status: try column("status"),
                    responseHeaders: (try? decoder.decode([Exchange.Header].self, from: Data(responseHeaders.utf8)))
                        ?? [],
                    responseBody: Array(buffer: try column("response_body", as: ByteBuffer.self)),
                    startedAt: try column("started_at"), durationMicroseconds: try column("duration_us"),
                    note: try column("note", as: String?.self).map(ExchangeNote.init(rawValue:)), attemptID: attemptID,
                    stepPosition: try column("step")
                ))
        }
        return logs
    }

    /// One attempt of a scenario in a run: the given number (the last when `nil`) in the given lane (any when `nil`).
    package func attempt(runID: UUID, scenarioID: String, number: Int?, lane: Mode?) async throws -> AttemptRecord? {
        let candidates = try await attemptRecords(runID, scenarioID: scenarioID).filter {
            (number == nil || $0.attempt == number) && (lane == nil || $0.lane == lane)
        }
        return candidates.max {
            ($0.finishedAt ?? .distantPast, $0.attempt) < ($1.finishedAt ?? .distantPast, $1.attempt)
        }
    }

    /// The finished attempts of the run's scenarios in the last `runs` other runs on its git revision (`nil` matches
    /// `nil`), oldest first, at most `limit` per scenario (the newest). Bounded by runs so that judging costs the same
    /// after the hundredth run of a revision (a dirty working copy runs many times) as after the second; one row per
    /// scenario, its attempts in arrays. It needs nothing of the run but its id, so it can be read alongside the run.
    ///
    /// Only scenarios with an attempt that did not pass — in this run or in those runs — are read: a history of passes
    /// changes no verdict (without a failure in it there is at most one flip, where this run's failures begin), and
    /// neither makes a scenario unsteady nor gives a stable one evidence. In a suite that keeps passing that is none.
    /// Attempts an infrastructure incident explains (``Incident``) are left out: an outage says nothing of the test.
    package func laneHistory(of runID: UUID, limit: Int = 20, runs: Int = 10) async throws -> [String: [LaneOutcome]] {
        let rows = try await database.client.query(
            """
            WITH same AS MATERIALIZED (
                SELECT id, mode FROM runs
                WHERE project = (SELECT project FROM runs WHERE id = \(runID))
                  AND git_revision IS NOT DISTINCT FROM (SELECT git_revision FROM runs WHERE id = \(runID)) AND id <> \(runID)
                ORDER BY created_at DESC LIMIT \(runs)
            ), failed AS (
                SELECT DISTINCT f.scenario_id AS id
                FROM (SELECT id FROM same UNION ALL SELECT \(runID)) AS r(id),
                LATERAL (SELECT a.scenario_id FROM attempts a WHERE a.run_id = r.id AND a.outcome <> 'passed' AND a.incident IS NULL) f
            )
            SELECT ids.id, array_agg(recent.mode ORDER BY recent.finished_at), array_agg(recent.passed ORDER BY recent.finished_at),
                   array_agg(recent.id ORDER BY recent.finished_at)
            FROM (SELECT scenario_id FROM run_scenarios WHERE run_id = \(runID) AND scenario_id IN (SELECT id FROM failed)) AS ids(id),
            LATERAL (SELECT coalesce(a.mode, r.mode) AS mode, a.outcome = 'passed' AS passed, a.id, a.finished_at
                     FROM same r JOIN attempts a ON a.run_id = r.id AND a.scenario_id = ids.id
                     -- An attempt with an outcome is never abandoned: said, it lets the lane index find each run's
                     -- attempts of the scenario (otherwise each failing scenario reads every attempt of every run).
                     WHERE a.outcome IS NOT NULL AND a.incident IS NULL AND a.state <> 'abandoned'
                     ORDER BY a.finished_at DESC LIMIT \(limit)) recent
            GROUP BY ids.id
            """,
            logger: database.logger
        )
        var history: [String: [LaneOutcome]] = [:]
        for try await (id, modes, passes, attempts) in rows.decode((String, [String], [Bool], [Int64]).self) {
            history[id] = zip(modes, zip(passes, attempts)).map { mode, outcome in
                let mode = Mode(rawValue: mode) ?? .replay
                return LaneOutcome(lane: mode.lane, mode: mode, passed: outcome.0, attemptID: outcome.1)
            }
        }
        return history
    }

    /// Stores the verdicts of a run's scenarios, in one statement.
    package func saveVerdicts(_ runID: UUID, _ verdicts: [StoredVerdict]) async throws {
        struct Row: Encodable {
            var id, verdict, reason: String
            var evidence: [NetworkDifference]
            var endpoint: String?
        }
        let json = String(
            decoding: try JSONEncoder().encode(
                verdicts.map {
                    Row(
                        id: $0.scenarioID, verdict: $0.verdict.rawValue, reason: $0.reason, evidence: $0.evidence,
                        endpoint: $0.endpoint)
                }), as: UTF8.self)
        try await database.client.query(
            """
            UPDATE run_scenarios rs SET verdict = x.verdict, verdict_reason = x.reason, evidence = x.evidence,
                                        verdict_endpoint = x.endpoint
            FROM jsonb_to_recordset(\(json)::jsonb) AS x(id text, verdict text, reason text, evidence jsonb, endpoint text)
            WHERE rs.run_id = \(runID) AND rs.scenario_id = x.id
            """,
            logger: database.logger
        )
    }
}
