import Foundation
import OrchestrateModel
import PostgresNIO

/// One attempt's failures of one upstream host: the exchanges the backend itself was asked (live or record mode) and
/// did not answer, or answered with a 502, 503 or 504 (a gateway or a service that is not there; a 500 is the backend's
/// answer to the request, which the request may have caused) — a failed attempt's at its failing step when it has one;
/// the first and last of them, their bodies and headers left out.
package struct UpstreamFailure: Sendable {
    package var attemptID: Int64
    package var host: String
    package var noAnswers: Int
    package var serverErrors: Int
    package var first: Exchange
    package var last: Exchange
}

extension RunStore {
    /// Whether the exchange `exchange` (a row of `exchange_log`) happened at the failing step of the attempt whose id is
    /// `attempt`, or that attempt reported no failing step: what failed there is what its failure met.
    static func atFailingStep(attempt: String, exchange: String) -> String {
        """
        \(exchange).step IS NOT DISTINCT FROM coalesce(
            (SELECT min(s.position) FROM steps s WHERE s.attempt_id = \(attempt) AND s.status = 'failed'), \(exchange).step)
        """
    }

    /// The upstream failures (``UpstreamFailure``) of the run's finished attempts, one per attempt and host, passing
    /// attempts' too (what tells a host whose failures the app tolerates from one whose failures failed the tests).
    package func upstreamFailures(_ runID: UUID) async throws -> [UpstreamFailure] {
        let rows = try await database.client.query(
            """
            SELECT attempt_id, host, mode, matched, method, url, status, note, started_at, coalesce(duration_us, 0) AS duration_us,
                   step_position, sequence, no_answers, server_errors, k, n
            FROM (SELECT e.attempt_id, e.host, e.mode, e.matched, e.method, e.url, e.status, e.note, e.started_at,
                         e.duration_us, e.step AS step_position, e.sequence,
                         count(*) FILTER (WHERE e.note LIKE 'upstream error%') OVER w AS no_answers,
                         count(*) FILTER (WHERE e.note IS NULL) OVER w AS server_errors,
                         row_number() OVER (w ORDER BY e.started_at, e.sequence) AS k, count(*) OVER w AS n
                  FROM attempts a JOIN exchange_log e ON e.attempt_id = a.id
                  WHERE a.run_id = \(runID) AND a.state = 'finished' AND a.outcome IS NOT NULL
                    AND e.mode IN ('live', 'record')
                    AND (e.note LIKE 'upstream error%' OR (e.matched AND e.note IS NULL AND e.status IN (502, 503, 504)))
                    -- A failed attempt's at its failing step, when it has one.
                    AND (a.outcome = 'passed' OR \(unescaped: Self.atFailingStep(attempt: "a.id", exchange: "e")))
                  WINDOW w AS (PARTITION BY e.attempt_id, e.host)) x
            WHERE k = 1 OR k = n
            ORDER BY attempt_id, host, k
            """,
            logger: database.logger)
        var failures: [UpstreamFailure] = []
        for try await row in rows {
            let column = NamedColumns(row)
            let exchange = Exchange(
                sequence: try column("sequence"), mode: Mode(rawValue: try column("mode")) ?? .live,
                matched: try column("matched"), host: try column("host"), method: try column("method"),
                url: try column("url"), requestHeaders: [], requestBody: [], status: try column("status"),
                responseHeaders: [], responseBody: [], startedAt: try column("started_at"),
                durationMicroseconds: try column("duration_us"),
                note: try column("note", as: String?.self).map(ExchangeNote.init(rawValue:)),
                attemptID: try column("attempt_id"), stepPosition: try column("step_position"))
            if let previous = failures.last, previous.attemptID == exchange.attemptID, previous.host == exchange.host {
                failures[failures.count - 1].last = exchange
                continue
            }
            failures.append(
                UpstreamFailure(
                    attemptID: try column("attempt_id"), host: exchange.host,
                    noAnswers: Int(try column("no_answers", as: Int64.self)),
                    serverErrors: Int(try column("server_errors", as: Int64.self)), first: exchange, last: exchange))
        }
        return failures
    }

    /// Stores the run's incidents and marks the attempts each explains (`attempts.incident`), in one transaction: those
    /// attempts then count in no flakiness score (the rollup and ``flakiness(project:since:scenarioIDs:branch:limit:scoresOnly:)``
    /// leave them out), no quarantine and no later verdict (``laneHistory(of:limit:runs:)``). Done before the days of a
    /// run with failed attempts are rolled up.
    package func saveIncidents(_ runID: UUID, _ incidents: [Incident], explained: [Int64: Int]) async throws {
        guard !incidents.isEmpty else { return }
        let encoder = JSONEncoder()
        let details = try incidents.map { String(decoding: try encoder.encode($0), as: UTF8.self) }
        let (attemptIDs, numbers) = (Array(explained.keys), explained.keys.map { explained[$0]! })
        try await database.withTransaction { connection in
            // Stored again whole: what an earlier judgement of the run stored goes.
            try await connection.query("DELETE FROM incidents WHERE run_id = \(runID)", logger: database.logger)
            try await connection.query(
                "UPDATE attempts SET incident = NULL WHERE run_id = \(runID) AND incident IS NOT NULL",
                logger: database.logger)
            try await connection.query(
                """
                INSERT INTO incidents (run_id, number, host, began_at, ended_at, attempts, detail)
                SELECT \(runID), x.number, x.host, x.began_at, x.ended_at, x.attempts, x.detail::jsonb
                FROM unnest(\(incidents.map(\.number))::integer[], \(incidents.map(\.host))::text[],
                            \(incidents.map(\.first.at))::timestamptz[], \(incidents.map(\.last.at))::timestamptz[],
                            \(incidents.map(\.attempts))::integer[], \(details)::text[])
                     AS x(number, host, began_at, ended_at, attempts, detail)
                """,
                logger: database.logger)
            try await connection.query(
                """
                UPDATE attempts a SET incident = x.number
                FROM unnest(\(attemptIDs)::bigint[], \(numbers)::integer[]) AS x(id, number)
                WHERE a.id = x.id AND a.run_id = \(runID)
                """,
                logger: database.logger)
        }
    }

    /// The run's incidents as its judge stored them, by number.
    package func incidents(_ runID: UUID) async throws -> [Incident] {
        let rows = try await database.client.query(
            "SELECT detail::text FROM incidents WHERE run_id = \(runID) ORDER BY number", logger: database.logger)
        let decoder = JSONDecoder()
        var incidents: [Incident] = []
        for try await detail in rows.decode(String.self) {
            incidents.append(try decoder.decode(Incident.self, from: Data(detail.utf8)))
        }
        return incidents
    }
}
