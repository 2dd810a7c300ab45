import Coordinator
import Foundation
import OrchestrateModel

/// The summary `orchestrate run` prints at the end, for people.
enum RunSummaryText {
    static func render(_ report: RunReport, attemptsDirectory: String, files: RunReportFiles.Written) -> String {
        let id = report.runID.uuidString.lowercased()
        let elapsed = (report.finishedAt ?? Date()).timeIntervalSince(report.startedAt)
        var counts = ["\(report.count(.passed)) passed"]
        if report.count(.flaky) > 0 { counts.append("\(report.count(.flaky)) flaky") }
        counts.append("\(report.count(.failed)) failed")
        if report.count(.pending) > 0 { counts.append("\(report.count(.pending)) not run") }
        let verb = report.state == .interrupted ? "interrupted after" : "finished in"
        var lines = ["run \(id) \(verb) \(String(format: "%.1f", elapsed))s: \(report.scenarios.count) scenarios, \(counts.joined(separator: ", "))"]
        let verdicts = Verdict.allCases.compactMap { verdict in
            let count = report.scenarios.filter { $0.verdict == verdict }.count
            return count > 0 ? "\(count) \(verdict.rawValue)" : nil
        }
        if report.mode == .compare || verdicts.contains(where: { !$0.hasSuffix("stable") }) {
            lines.append("verdicts: \(verdicts.joined(separator: ", "))")
        }
        let failed = report.scenarios.filter { $0.result == .failed || ($0.verdict != nil && $0.verdict != .stable) }
        if !failed.isEmpty {
            lines.append("needs a look:")
            for entry in failed {
                let last = entry.attempts.last { $0.outcome != .passed } ?? entry.attempts.last
                let folder =
                    last.map {
                        AttemptFolders.path(
                            attemptsDirectory: attemptsDirectory, runID: report.runID, scenarioID: entry.scenario.id, attempt: $0.attempt,
                            lane: $0.lane)
                    } ?? ""
                var line = "  \(entry.scenario.id)  \(entry.verdict?.rawValue ?? entry.result.rawValue)"
                if entry.quarantined { line += " (quarantined: not fatal)" }
                line += ": \(entry.verdictReason ?? last?.failureSummary ?? "")"
                lines.append(line)
                if let last, last.outcome != .passed {
                    lines.append(
                        "      \(last.lane.map { "\($0.rawValue) " } ?? "")attempt \(last.attempt) \(last.failureSummary); logs in \(folder)")
                }
                for difference in entry.evidence.prefix(5) {
                    lines.append("      \(difference.place.map { "\($0): " } ?? "")\(difference)")
                }
                if entry.evidence.count > 5 { lines.append("      … \(entry.evidence.count - 5) more differences in the report") }
            }
        }
        let flaky = report.scenarios.filter { $0.result == .flaky && $0.verdict == nil }
        if !flaky.isEmpty {
            lines.append("flaky (failed, then passed on retry):")
            for entry in flaky {
                let failures = entry.attempts.filter { $0.outcome != .passed }.map { "attempt \($0.attempt) \($0.failureSummary)" }
                lines.append("  \(entry.scenario.id)  \(failures.joined(separator: "; "))")
            }
        }
        if report.state == .interrupted { lines.append("resume with: orchestrate run --resume \(id)") }
        lines.append("junit: \(files.junit.last!)")
        lines.append("report: \(files.html)")
        return lines.joined(separator: "\n")
    }
}
