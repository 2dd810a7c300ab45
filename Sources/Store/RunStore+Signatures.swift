import Foundation
import OrchestrateModel
import PostgresNIO

/// A failure signature across runs: `orchestrate failures`.
package struct SignatureLine: Sendable, Encodable {
    package var signature: String
    /// Failed attempts with it, the tests and runs they belong to.
    package var failures: Int
    package var tests: Int
    package var runs: Int
    /// How many of its failures an infrastructure incident explained.
    package var incidents: Int
    package var firstSeen: Date
    package var lastSeen: Date
    /// The newest failure with it: its test, run, and what it said (``FailureSignature/message(_:)``, its first line).
    package var exampleTest: String
    package var exampleRun: UUID
    package var exampleMessage: String
}

/// Where an attempt failed (``RunStore/failurePlaces(_:)``): the endpoint of the exchange that failed and what came back
/// (`GET api.x.test/v1/carts/{id}`, `500`), and its failing step with what it said.
package struct FailurePlace: Sendable {
    package var endpoint: String?
    package var answer: String?
    package var step: String?

    /// `GET api.x.test/v1/carts/{id} → 500`.
    package var exchange: String? { endpoint.map { "\($0) → \(answer ?? "?")" } }
}

extension RunStore {
    /// Where each of the given attempts failed: the first exchange, at its failing step when it has one, that did not
    /// get a 2xx or 3xx (no answer, an error status) or that a replay could not answer
    /// (`GET api.x.test/v1/carts/{id} → 500`), and its failing step with what it said (`When I pay: card declined`);
    /// by attempt id, each when there is one.
    package func failurePlaces(_ attemptIDs: [Int64]) async throws -> [Int64: FailurePlace] {
        guard !attemptIDs.isEmpty else { return [:] }
        var places: [Int64: FailurePlace] = [:]
        let steps = try await database.client.query(
            """
            SELECT DISTINCT ON (attempt_id) attempt_id, keyword, name, coalesce(error, '')
            FROM steps WHERE attempt_id = ANY(\(attemptIDs)) AND status = 'failed'
            ORDER BY attempt_id, position
            """,
            logger: database.logger)
        for try await (id, keyword, name, error) in steps.decode((Int64, String, String, String).self) {
            let said = error.split(whereSeparator: \.isNewline).first.map { ": " + $0 } ?? ""
            let keyword = keyword.trimmingCharacters(in: .whitespaces)
            places[id, default: FailurePlace()].step = (keyword.isEmpty ? "" : keyword + " ") + name + said
        }
        let rows = try await database.client.query(
            """
            SELECT DISTINCT ON (e.attempt_id) e.attempt_id, e.method, e.host, e.url, e.status, e.mode, e.matched,
                   coalesce(e.note LIKE 'upstream error%', false) AS unanswered
            FROM exchange_log e
            WHERE e.attempt_id = ANY(\(attemptIDs))
              AND (e.status IS NULL OR e.status >= 400 OR (NOT e.matched AND e.mode = 'replay'))
              AND \(unescaped: Self.atFailingStep(attempt: "e.attempt_id", exchange: "e"))
            -- What the backend could not do (no answer, a 5xx) before a 4xx, which a test may expect.
            ORDER BY e.attempt_id, (e.status IS NULL OR e.status >= 500 OR e.note LIKE 'upstream error%') DESC, e.sequence
            """,
            logger: database.logger)
        for try await (id, method, host, url, status, mode, matched, unanswered) in rows.decode(
            (Int64, String, String, String, Int?, String, Bool, Bool).self)
        {
            let answer =
                unanswered
                ? "no answer"
                : !matched && mode == Mode.replay.rawValue ? "not recorded" : status.map { "\($0)" } ?? "no answer"
            places[id, default: FailurePlace()].endpoint = FailureSignature.endpoint(
                method: method, host: host, url: url)
            places[id, default: FailurePlace()].answer = answer
        }
        return places
    }

    /// Stores the failed attempts' signatures and the endpoints that failed in them (by attempt id).
    package func saveSignatures(_ signatures: [Int64: String], endpoints: [Int64: String]) async throws {
        guard !signatures.isEmpty else { return }
        let ids = Array(signatures.keys)
        try await database.client.query(
            """
            UPDATE attempts a SET signature = x.signature, failing_endpoint = nullif(x.endpoint, '')
            FROM unnest(\(ids)::bigint[], \(ids.map { signatures[$0]! })::text[], \(ids.map { endpoints[$0] ?? "" })::text[])
                 AS x(id, signature, endpoint)
            WHERE a.id = x.id
            """,
            logger: database.logger)
    }

    /// The project's failure signatures over the attempts finished since `since` (of one branch's runs, when given),
    /// the ones that hit the most tests first, then the most failures.
    package func failureSignatures(
        project: String, since: Date, branch: String? = nil, limit: Int
    ) async throws -> [SignatureLine] {
        let rows = try await database.client.query(
            """
            SELECT g.*, x.scenario_id AS example_test, x.run_id AS example_run, x.outcome, x.exit_code, x.signal,
                   x.duration_ms, left(x.error, 4096) AS error, right(x.stderr, 4096) AS stderr
            FROM (SELECT a.signature, count(*) AS failures, count(DISTINCT a.scenario_id) AS tests,
                         count(DISTINCT a.run_id) AS runs, count(*) FILTER (WHERE a.incident IS NOT NULL) AS incidents,
                         min(a.finished_at) AS first_seen, max(a.finished_at) AS last_seen
                  FROM attempts a JOIN runs r ON r.id = a.run_id
                  WHERE a.project = \(project) AND a.signature IS NOT NULL AND a.finished_at >= \(since)
                    AND (\(branch)::text IS NULL OR coalesce(r.branch, '') = \(branch))
                  GROUP BY a.signature
                  ORDER BY tests DESC, failures DESC, last_seen DESC, a.signature
                  LIMIT \(limit)) g,
            -- The newest failure with it, for an example.
            LATERAL (SELECT * FROM attempts x
                     WHERE x.project = \(project) AND x.signature = g.signature AND x.finished_at = g.last_seen
                     ORDER BY x.id DESC LIMIT 1) x
            ORDER BY g.tests DESC, g.failures DESC, g.last_seen DESC, g.signature
            """,
            logger: database.logger)
        var lines: [SignatureLine] = []
        for try await row in rows {
            let column = NamedColumns(row)
            let runID: UUID = try column("example_run")
            let example = AttemptRecord(
                id: 0, runID: runID, scenarioID: try column("example_test"), attempt: 0, state: .finished,
                outcome: try column("outcome", as: String?.self).flatMap(Outcome.init(rawValue:)),
                exitCode: try column("exit_code"), signal: try column("signal"), worker: nil, startedAt: nil,
                finishedAt: nil, durationMilliseconds: try column("duration_ms"), stdout: "",
                stderr: try column("stderr"),
                error: try column("error"))
            let message = TerminalText.plain(FailureSignature.message(example).text)
            lines.append(
                SignatureLine(
                    signature: try column("signature"), failures: Int(try column("failures", as: Int64.self)),
                    tests: Int(try column("tests", as: Int64.self)), runs: Int(try column("runs", as: Int64.self)),
                    incidents: Int(try column("incidents", as: Int64.self)), firstSeen: try column("first_seen"),
                    lastSeen: try column("last_seen"), exampleTest: try column("example_test"),
                    exampleRun: runID,
                    exampleMessage: String(
                        (message.split(whereSeparator: \.isNewline).first ?? "").prefix(FailureSignature.messageLimit))
                ))
        }
        return lines
    }
}

/// An upstream endpoint by the flakiness it explains: `orchestrate flaky --by endpoint`.
package struct EndpointFlakiness: Sendable, Encodable {
    package var endpoint: String
    /// Verdicts attributed to it (their failing lane's last failure met it, else their first network difference was its).
    package var nondeterministic: Int
    package var drift: Int
    /// Failed attempts whose failure met it (the exchange that failed at the failing step).
    package var failedAttempts: Int
}

extension RunStore {
    /// The project's upstream endpoints by the nondeterministic and drift verdicts attributed to them, then by the
    /// failed attempts they explain, over the whole UTC days since `since` (`dash_flaky_endpoints`), of one branch's
    /// runs when given.
    package func flakyEndpoints(
        project: String, since: Date, branch: String? = nil, limit: Int
    ) async throws -> [EndpointFlakiness] {
        let rows = try await database.client.query(
            """
            SELECT endpoint, sum(nondeterministic)::bigint, sum(drift)::bigint, sum(failed_attempts)::bigint
            FROM dash_flaky_endpoints
            WHERE project = \(project) AND day >= (\(since)::timestamptz AT TIME ZONE 'UTC')::date
              AND (\(branch)::text IS NULL OR branch = \(branch))
            GROUP BY endpoint
            ORDER BY sum(nondeterministic) + sum(drift) DESC, sum(failed_attempts) DESC, endpoint
            LIMIT \(limit)
            """,
            logger: database.logger)
        var lines: [EndpointFlakiness] = []
        for try await (endpoint, nondeterministic, drift, failed) in rows.decode((String, Int64, Int64, Int64).self) {
            lines.append(
                EndpointFlakiness(
                    endpoint: endpoint, nondeterministic: Int(nondeterministic), drift: Int(drift),
                    failedAttempts: Int(failed)))
        }
        return lines
    }
}

extension RunStore {
    /// The project's newest passing live attempts finished since `since`, at most `perTest` of each test and `limit` in
    /// all, with their test's id and feature file (what names its cassette); the newest first.
    package func passingLiveAttempts(
        project: String, since: Date, perTest: Int = 5, limit: Int = 500
    ) async throws -> [(attemptID: Int64, scenarioID: String, uri: String?)] {
        let rows = try await database.client.query(
            """
            SELECT a.id, s.id, s.uri
            FROM scenarios s,
            LATERAL (SELECT a.id, a.finished_at FROM attempts a JOIN runs r ON r.id = a.run_id
                     WHERE a.project = s.project AND a.scenario_id = s.id AND a.outcome = 'passed' AND a.finished_at >= \(since)
                       AND coalesce(a.mode, r.mode) = 'live'
                     ORDER BY a.finished_at DESC LIMIT \(perTest)) a
            WHERE s.project = \(project)
            ORDER BY a.finished_at DESC
            LIMIT \(limit)
            """,
            logger: database.logger)
        var attempts: [(attemptID: Int64, scenarioID: String, uri: String?)] = []
        for try await (id, scenario, uri) in rows.decode((Int64, String, String?).self) {
            attempts.append((id, scenario, uri))
        }
        return attempts
    }
}
