import Coordinator
import Foundation
import OrchestrateModel

/// The summary `orchestrate run` prints at the end, for people.
enum RunSummaryText {
    static func render(_ report: RunReport, attemptsDirectory: String, junit: String) -> String {
        let id = report.runID.uuidString.lowercased()
        let elapsed = (report.finishedAt ?? Date()).timeIntervalSince(report.startedAt)
        var counts = ["\(report.count(.passed)) passed"]
        if report.count(.flaky) > 0 { counts.append("\(report.count(.flaky)) flaky") }
        counts.append("\(report.count(.failed)) failed")
        if report.count(.pending) > 0 { counts.append("\(report.count(.pending)) not run") }
        let verb = report.state == "interrupted" ? "interrupted after" : "finished in"
        var lines = ["run \(id) \(verb) \(String(format: "%.1f", elapsed))s: \(report.scenarios.count) scenarios, \(counts.joined(separator: ", "))"]
        let failed = report.scenarios.filter { $0.result == .failed }
        if !failed.isEmpty {
            lines.append("failed:")
            for entry in failed {
                let last = entry.attempts.last
                let folder = AttemptFolders.path(attemptsDirectory: attemptsDirectory, runID: report.runID,
                                                 scenarioID: entry.scenario.id, attempt: last?.attempt ?? 1)
                lines.append("  \(entry.scenario.id)  \(last?.failureSummary ?? "")  (\(entry.attempts.count) attempt(s); logs in \(folder))")
            }
        }
        let flaky = report.scenarios.filter { $0.result == .flaky }
        if !flaky.isEmpty {
            lines.append("flaky (failed, then passed on retry):")
            for entry in flaky {
                let failures = entry.attempts.filter { $0.outcome != .passed }.map { "attempt \($0.attempt) \($0.failureSummary)" }
                lines.append("  \(entry.scenario.id)  \(failures.joined(separator: "; "))")
            }
        }
        if report.state == "interrupted" { lines.append("resume with: orchestrate run --resume \(id)") }
        lines.append("junit: \(junit)")
        return lines.joined(separator: "\n")
    }
}
