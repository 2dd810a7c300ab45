import Analysis
import Foundation
import MockServer
import OrchestrateModel
import Store

/// The third phase of a run: every scenario's verdict, from its outcomes against a controlled backend (replay) and the
/// real one (live, record) in this run and on the same git revision before, with — unless stable — the evidence that
/// explains it: the live attempt's network differences from the recording (fields that also differed in earlier passing
/// live attempts are noise, left out) and the requests a replay could not answer — each at its step.
package struct RunJudge {
    let runs: RunStore
    /// The cassette of a scenario.
    let cassette: @Sendable (Scenario) -> String
    var diff = NetworkDiff()
    /// How many earlier passing live attempts' differences from the recording are noise.
    var noiseSamples = 3

    package struct Judgement {
        /// The run as stored, with its verdicts.
        package var report: RunReport
        /// The verdicts that differ from what is stored, for the caller to store (``RunStore/saveVerdicts(_:_:)``): a
        /// single lane's pass was stored with its verdict as it settled.
        package var changed: [StoredVerdict]
        /// The scenarios with a failure in this run or in their history on this revision: the only ones whose
        /// flakiness score can have risen (without a failure there is no flip).
        package var unsteady: Set<String>
        /// The failed attempts the report's incidents explain (by attempt id), for the caller to store with them
        /// (``RunStore/saveIncidents(_:_:explained:)``) before the run's days are rolled up.
        package var explained: [Int64: Int] = [:]
        /// The signatures of the run's failed attempts (``FailureSignature``) and the endpoints that failed in them,
        /// by attempt id, for the caller to store (``RunStore/saveSignatures(_:endpoints:)``).
        package var signatures: [Int64: String] = [:]
        package var failingEndpoints: [Int64: String] = [:]
    }

    /// Reads the finished run (and, side by side, its scenarios' history) and judges it: its incidents first, then the
    /// verdicts from the attempts they do not explain. `planned`: its scenarios as this process planned them
    /// (``RunStore/report(_:planned:)``).
    func judge(_ runID: UUID, planned: [Scenario]? = nil) async throws -> Judgement {
        async let history = runs.laneHistory(of: runID)
        var report = try await runs.report(runID, planned: planned)
        let explained = try await findIncidents(in: &report)
        let (signatures, endpoints) = try await sign(&report)
        let (verdicts, unsteady) = try await verdicts(report, history: try await history, failingEndpoints: endpoints)
        let (judged, changed) = Self.apply(verdicts, to: report)
        return Judgement(
            report: judged, changed: changed, unsteady: unsteady, explained: explained, signatures: signatures,
            failingEndpoints: endpoints)
    }

    /// Each failed attempt's signature (``FailureSignature``) from where it failed (the `file:line` its runner's failure
    /// leads with — not where the test is declared, which would make each test's failures its own), what it said, and
    /// the exchange that failed at its failing step; set in the report, and by attempt id with the endpoints that failed.
    private func sign(
        _ report: inout RunReport
    ) async throws -> (signatures: [Int64: String], endpoints: [Int64: String]) {
        let failed = report.scenarios.flatMap { $0.attempts.filter { $0.failed } }
        guard !failed.isEmpty else { return ([:], [:]) }
        let places = try await runs.failurePlaces(failed.map(\.id))
        var signatures: [Int64: String] = [:]
        let endpoints = places.compactMapValues(\.endpoint)
        for index in report.scenarios.indices {
            let entry = report.scenarios[index]
            for (position, attempt) in entry.attempts.enumerated()
            where attempt.failed {
                let signature = FailureSignature.make(
                    place: RunReport.ScenarioEntry.leadingPlace(attempt.error ?? ""),
                    said: FailureSignature.message(attempt, failingStep: places[attempt.id]?.step),
                    exchange: places[attempt.id]?.exchange, test: entry.scenario.id)
                report.scenarios[index].attempts[position].signature = signature
                signatures[attempt.id] = signature
            }
        }
        return (signatures, endpoints)
    }

    /// The run as stored, without judging it (an interrupted run).
    func unjudged(_ runID: UUID) async throws -> Judgement {
        Judgement(report: try await runs.report(runID), changed: [], unsteady: [])
    }

    /// The run's infrastructure incidents (``IncidentRule``), set in the report with the attempts each explains; those
    /// attempts, by id. Only a run with traffic through its mock servers and enough failures has any to look for.
    private func findIncidents(in report: inout RunReport) async throws -> [Int64: Int] {
        let attempts = report.scenarios.flatMap { entry in
            entry.attempts.filter { $0.outcome != nil }.map {
                IncidentRule.Attempt(
                    id: $0.id, scenarioID: entry.scenario.id, attempt: $0.attempt, passed: $0.outcome == .passed)
            }
        }
        guard report.mockTraffic, attempts.count(where: { !$0.passed }) >= IncidentRule.minimumAttempts else {
            return [:]
        }
        let sightings = try await runs.upstreamFailures(report.runID).map { failure in
            IncidentRule.Sighting(
                attemptID: failure.attemptID, host: failure.host, noAnswers: failure.noAnswers,
                serverErrors: failure.serverErrors,
                first: (failure.first.startedAt, RetryEvidence.describe(failure.first)),
                last: (failure.last.startedAt, RetryEvidence.describe(failure.last)))
        }
        let (incidents, explained) = IncidentRule.incidents(attempts: attempts, sightings: sightings)
        report.incidents = incidents
        for index in report.scenarios.indices {
            for attempt in report.scenarios[index].attempts.indices {
                report.scenarios[index].attempts[attempt].incident =
                    explained[report.scenarios[index].attempts[attempt].id]
            }
        }
        return explained
    }

    /// The report with the verdicts filled in, and those of the verdicts that differ from what the report had stored.
    package static func apply(
        _ verdicts: [StoredVerdict], to report: RunReport
    ) -> (report: RunReport, changed: [StoredVerdict]) {
        let byScenario = Dictionary(verdicts.map { ($0.scenarioID, $0) }, uniquingKeysWith: { _, last in last })
        var report = report
        var unchanged = Set<String>()
        for index in report.scenarios.indices {
            guard let judged = byScenario[report.scenarios[index].scenario.id] else { continue }
            let stored = report.scenarios[index]
            if stored.verdict == judged.verdict, stored.verdictReason == judged.reason,
                stored.evidence == judged.evidence
            {
                unchanged.insert(judged.scenarioID)
            }
            report.scenarios[index].verdict = judged.verdict
            report.scenarios[index].verdictReason = judged.reason
            report.scenarios[index].evidence = judged.evidence
        }
        return (report, verdicts.filter { !unchanged.contains($0.scenarioID) })
    }

    /// One verdict per scenario that ran, and the unsteady scenarios.
    /// `failingEndpoints`: the endpoint that failed in each failed attempt that had one, by attempt id; a verdict that
    /// is not stable is attributed to its first network difference's endpoint, else to its lane's last failure's.
    func verdicts(
        _ report: RunReport, history: [String: [LaneOutcome]], failingEndpoints: [Int64: String] = [:]
    ) async throws -> (verdicts: [StoredVerdict], unsteady: Set<String>) {
        // An attempt an incident explains says nothing of the test: a test with no other is not judged.
        let entries = report.scenarios.filter { $0.attempts.contains { $0.outcome != nil && $0.incident == nil } }
        // First the verdicts (and, unless stable, the attempts that explain them); then the logs the evidence comes
        // from, in one query.
        var judged:
            [(
                entry: RunReport.ScenarioEntry, verdict: Verdict, reason: String, replay: AttemptRecord?,
                live: AttemptRecord?, noise: [Int64]
            )] = []
        var unsteady = Set<String>()
        for entry in entries {
            let earlier = history[entry.scenario.id] ?? []
            let finished = entry.attempts.filter { $0.outcome != nil && $0.incident == nil }.sorted {
                ($0.finishedAt ?? .distantPast) < ($1.finishedAt ?? .distantPast)
            }
            if finished.contains(where: { $0.outcome != .passed }) || earlier.contains(where: { !$0.passed }) {
                unsteady.insert(entry.scenario.id)
            }
            func outcomes(_ lane: Mode) -> VerdictRule.Outcomes? {
                let run = finished.filter { mode(of: $0, in: entry, report: report).lane == lane }.map {
                    $0.outcome == .passed
                }
                guard !run.isEmpty else { return nil }
                return VerdictRule.Outcomes(thisRun: run, history: earlier.filter { $0.lane == lane }.map(\.passed))
            }
            let (verdict, reason) = VerdictRule.judge(
                replay: outcomes(.replay), live: outcomes(.live), plain: !report.mockTraffic)
            guard verdict != .stable else {
                judged.append((entry, verdict, reason, nil, nil, []))
                continue
            }
            // The evidence comes from the lane's last failed attempt when it has one: that is what needs explaining.
            func evidenceAttempt(_ mode: Mode) -> AttemptRecord? {
                let attempts = finished.filter { self.mode(of: $0, in: entry, report: report) == mode }
                return attempts.last { $0.outcome != .passed } ?? attempts.last
            }
            judged.append(
                (
                    entry, verdict, reason, evidenceAttempt(.replay), evidenceAttempt(.live),
                    // Passing live attempts (not the recording itself, which the cassette may have been edited since).
                    earlier.filter { $0.mode == .live && $0.passed }.suffix(noiseSamples).map(\.attemptID)
                ))
        }
        let logs = try await runs.networkLogs(
            judged.flatMap { [$0.replay?.id, $0.live?.id].compactMap { $0 } + $0.noise })
        var verdicts: [StoredVerdict] = []
        for (entry, verdict, reason, replay, live, noiseIDs) in judged {
            var evidence: [NetworkDifference] = []
            if let replay, let log = logs[replay.id] {
                evidence += log.exchanges.filter { !$0.matched && $0.mode == .replay }.map { exchange in
                    NetworkDifference(
                        kind: .unmatched, request: "\(exchange.method) \(NetworkDiff.target(exchange))",
                        live: exchange.note?.rawValue,
                        step: exchange.stepPosition)
                }.map { named($0, in: log) }
            }
            var reason = reason
            if let live, let log = logs[live.id], let recording = try? Cassette.load(cassette(entry.scenario)) {
                let recorded = recording.entries.map { $0.exchange() }
                let noise = NetworkDifference.noise(
                    noiseIDs.compactMap { logs[$0] }.map { diff.differences(recorded: recorded, live: $0.exchanges) })
                let differences = diff.differences(recorded: recorded, live: log.exchanges)
                evidence += differences.filter { !noise.contains($0.key) }.map { named($0, in: log) }
                // The filter says what it left out: fields that also changed in passing live attempts.
                let left = Array(Set(differences.filter { noise.contains($0.key) }.map { $0.path ?? $0.request }))
                    .sorted()
                if !left.isEmpty {
                    reason +=
                        " (left out as noise, changed in passing live attempts too: "
                        + left.prefix(5).joined(separator: ", ") + (left.count > 5 ? " and \(left.count - 5) more" : "")
                        + "; orchestrate suggest ignores)"
                }
            }
            var stored = StoredVerdict(
                scenarioID: entry.scenario.id, verdict: verdict, reason: reason, evidence: evidence)
            // What failed first: the failing lane's failure's exchange; else its first difference that can fail a
            // test (a status, a body, a request not recorded or new), not a slower answer, a header, or a request the
            // test may not have reached.
            let failed = [live, replay].compactMap { $0 }.filter { $0.failed }
            stored.endpoint =
                failed.lazy.compactMap { failingEndpoints[$0.id] }.first
                ?? evidence.lazy.filter { [.status, .body, .unmatched, .newRequest].contains($0.kind) }
                .compactMap { FailureSignature.endpoint(request: $0.request) }.first
            verdicts.append(stored)
        }
        return (verdicts, unsteady)
    }

    /// The mode an attempt ran in: its lane's in a compare run, else the scenario's in the run.
    private func mode(of attempt: AttemptRecord, in entry: RunReport.ScenarioEntry, report: RunReport) -> Mode {
        attempt.lane ?? entry.scenario.mode(inRun: report.mode)
    }

    /// Names the step a difference happened in (the live attempt's; a missing request's is the recording's).
    private func named(_ difference: NetworkDifference, in log: NetworkLog) -> NetworkDifference {
        var named = difference
        if let position = difference.step, difference.kind != .missingRequest {
            named.stepName = log.stepTitle(position)
        }
        return named
    }
}
