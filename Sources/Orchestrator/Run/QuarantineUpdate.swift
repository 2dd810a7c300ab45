import Analysis
import Foundation
import OrchestrateModel
import Store

/// Quarantine after a judged run: the entries whose last day has passed come out, and automatic quarantine
/// (``QuarantinePolicy``) scores the candidates and applies what goes in and out; each change is said as a note beside
/// the run's summary. It applies from the next run on.
enum QuarantineUpdate {
    static func apply(
        after judgement: RunJudge.Judgement, _ settings: OrchestrateConfig.Quarantine, project: String, runs: RunStore,
        output: any RunOutput
    ) async throws {
        for entry in try await runs.endQuarantines(project: project) {
            output.note("quarantine ended: \(entry.scenarioID) " + Self.ended(entry))
        }
        let policy = QuarantinePolicy(threshold: settings.threshold)
        guard let threshold = policy.threshold else { return }
        let automatic =
            policy.needsAutomaticEntries
            ? Set(try await runs.quarantined(project: project).filter(\.automatic).map(\.scenarioID)) : []
        let candidates = policy.candidates(
            ran: judgement.report.scenarios.map(\.scenario.id), unsteady: judgement.unsteady, automatic: automatic)
        guard !candidates.isEmpty else { return }
        let since = Date().addingTimeInterval(-Double(settings.window.wholeMilliseconds) / 1000)
        let scores = try await runs.flakiness(
            project: project, since: since, scenarioIDs: candidates, limit: candidates.count, scoresOnly: true)
        let changes = policy.changes(scores: scores.map { ($0.scenarioID, $0.score) })
        let (added, released) = try await runs.applyAutomaticQuarantine(
            project: project, add: changes.add.map { ($0.scenarioID, $0.score, $0.reason) }, release: changes.release
        )
        for id in added { output.note("quarantined \(id): flakiness score reached \(threshold) (orchestrate flaky)") }
        for id in released { output.note("released \(id) from quarantine: flakiness score below \(threshold)") }
    }

    /// What ended: `(its last day 2026-11-20, owner alice, "flaky login"): its failures fail runs again`.
    static func ended(_ entry: QuarantineEntry) -> String {
        let facts =
            ["its last day \(entry.until ?? "?")"] + (entry.owner.map { ["owner \($0)"] } ?? []) + [
                "\"\(entry.reason)\""
            ]
        return "(\(facts.joined(separator: ", "))): its failures fail runs again"
    }
}
