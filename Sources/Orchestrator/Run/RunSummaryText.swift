import Coordinator
import Foundation
import OrchestrateModel
import Store

/// The summary `orchestrate run` prints at the end, for people.
enum RunSummaryText {
    /// `hosts`: each host's part; shown when more than one worked the run.
    static func render(
        _ report: RunReport, attemptsDirectory: String, files: RunReportFiles.Written, hosts: [HostShare] = []
    ) -> String {
        let id = report.runID.uuidString.lowercased()
        var lines = [headline(report)]
        if let reason = report.stopReason {
            lines.append("stopped early: \(reason); \(report.count(.pending)) not run")
        }
        if let selection = selectionLine(report) { lines.append(selection) }
        let misses = report.scenarios.filter(\.selectionMiss)
        if !misses.isEmpty {
            lines.append(
                "selection misses: \(misses.count) sampled test\(misses.count == 1 ? "" : "s") the selection left out failed: "
                    + misses.prefix(incidentTests).map(\.scenario.id).joined(separator: ", "))
        }
        let verdicts = verdicts(report)
        if report.mode == .compare || verdicts.contains(where: { !$0.hasSuffix("stable") }) {
            lines.append("verdicts: \(verdicts.joined(separator: ", "))")
        }
        lines += incidentLines(report)
        // A test whose failures were all an incident's is said with the incident, not as a failure of its own.
        let failed = report.scenarios.filter {
            $0.incident == nil && ($0.result == .failed || ($0.verdict != nil && $0.verdict != .stable))
        }
        if !failed.isEmpty {
            lines.append("needs a look:")
            for entry in failed {
                let last = entry.attempts.last { $0.outcome != .passed } ?? entry.attempts.last
                let folder =
                    last.map {
                        AttemptFolders.path(
                            attemptsDirectory: attemptsDirectory, runID: report.runID, scenarioID: entry.scenario.id,
                            attempt: $0.attempt,
                            lane: $0.lane)
                    } ?? ""
                var line = "  \(entry.scenario.id)  \(entry.verdict?.rawValue ?? entry.result.rawValue)"
                if entry.quarantined { line += " (quarantined: not fatal)" }
                line += ": \(entry.verdictReason ?? last?.failureSummary ?? "")"
                lines.append(line)
                if let last, last.outcome != .passed {
                    lines.append(
                        "      \(last.lane.map { "\($0.rawValue) " } ?? "")attempt \(last.attempt) \(entry.summary(of: last)); logs in \(folder)"
                    )
                }
                for difference in entry.evidence.prefix(5) {
                    lines.append("      \(difference.place.map { "\($0): " } ?? "")\(difference)")
                }
                if entry.evidence.count > 5 {
                    lines.append("      … \(entry.evidence.count - 5) more differences in the report")
                }
            }
        }
        let flaky = report.scenarios.filter { $0.result == .flaky && $0.verdict == nil && $0.incident == nil }
        if !flaky.isEmpty {
            lines.append("flaky (failed, then passed on retry):")
            for entry in flaky {
                let failures = entry.attempts.filter { $0.outcome != .passed }.map {
                    "attempt \($0.attempt) \(entry.summary(of: $0))"
                }
                lines.append("  \(entry.scenario.id)  \(failures.joined(separator: "; "))")
            }
        }
        lines += hostLines(hosts)
        if report.state == .interrupted { lines.append("resume with: orchestrate run --resume \(id)") }
        lines.append("junit: \(files.junit.last!)")
        lines.append("report: \(files.html)")
        return lines.joined(separator: "\n")
    }

    /// Each infrastructure incident in a few lines: what the host did, its first and last failing exchange, the tests it
    /// hit (the first ``incidentTests``), and what it means for the run.
    static func incidentLines(_ report: RunReport) -> [String] {
        var lines: [String] = []
        for incident in report.incidents {
            lines.append(incident.headline)
            lines.append("  first: \(Incident.describe(incident.first))")
            if incident.last != incident.first { lines.append("  last:  \(Incident.describe(incident.last))") }
            let more = incident.scenarioIDs.count - incidentTests
            lines.append(
                "  tests: \(incident.scenarioIDs.prefix(incidentTests).joined(separator: ", "))"
                    + (more > 0 ? " and \(more) more (in the report)" : ""))
        }
        if !report.incidents.isEmpty {
            let failed = report.scenarios.count(where: \.failedByIncident)
            lines.append(
                "  an outage, not the tests: these attempts count in no flakiness score or quarantine"
                    + (failed > 0
                        ? "; \(failed) test\(failed == 1 ? "" : "s") failed only through it (exit 3 unless another failure fails the run)"
                        : ""))
        }
        return lines
    }

    /// What chose the run's tests, and what leaving the rest out saved: `selection: changed since main (3f2a…), 2 files:
    /// 3 of 7 tests ran, 4 left out (about 12.3 s saved by history), 1 sampled`; `nil` for a run of the whole suite.
    static func selectionLine(_ report: RunReport) -> String? {
        guard let selection = report.selection else { return nil }
        let total = report.scenarios.count + report.skipped.count
        let sampled = report.scenarios.count(where: \.sampled)
        return
            "selection: \(selection): \(report.scenarios.count) of \(total) tests ran, \(report.skipped.count) left out "
            + "(about \(String(format: "%.1f", Double(report.savedMilliseconds) / 1000)) s saved by history)"
            + (sampled > 0 ? ", \(sampled) of them sampled (--sample)" : "")
    }

    /// How many of an incident's tests the summary names.
    static let incidentTests = 10

    /// The first line: the run, how long it took, its counts.
    static func headline(_ report: RunReport) -> String {
        let elapsed = (report.finishedAt ?? Date()).timeIntervalSince(report.startedAt)
        let verb =
            switch report.state {
            case .interrupted: "interrupted after"
            case .running: "running for"
            case .finished: "finished in"
            }
        return
            "run \(report.runID.uuidString.lowercased()) \(verb) \(String(format: "%.1f", elapsed))s: \(report.scenarios.count) scenarios, "
            + counts(report).joined(separator: ", ")
    }

    /// The run's results counted: passed and failed always, flaky and not run when there are any.
    static func counts(_ report: RunReport) -> [String] {
        var counts = ["\(report.count(.passed)) passed"]
        if report.count(.flaky) > 0 { counts.append("\(report.count(.flaky)) flaky") }
        counts.append("\(report.count(.failed)) failed")
        if report.count(.pending) > 0 { counts.append("\(report.count(.pending)) not run") }
        return counts
    }

    /// Each verdict the run's scenarios got, counted (`3 stable`), in the verdicts' order.
    static func verdicts(_ report: RunReport) -> [String] {
        Verdict.allCases.compactMap { verdict in
            let count = report.scenarios.filter { $0.verdict == verdict }.count
            return count > 0 ? "\(count) \(verdict.rawValue)" : nil
        }
    }

    /// A line per host (slots, attempts, how busy its slots were), and the host that finished last when it lagged the
    /// others by a second or more.
    static func hostLines(_ hosts: [HostShare]) -> [String] {
        guard hosts.count > 1 else { return [] }
        var lines = ["hosts:"]
        let width = hosts.map(\.host.count).max() ?? 0
        for share in hosts {
            let nodes = share.nodes == [share.host] ? "" : "  (\(share.nodes.joined(separator: ", ")))"
            lines.append(
                "  \(share.host.padded(to: width))  \(share.slots) slot(s)  \(share.finished) attempt(s)  "
                    + "busy \(String(format: "%.1f", Double(share.busyMilliseconds) / 1000))s\(nodes)")
        }
        let ends = hosts.compactMap { share in share.lastFinishedAt.map { (share.host, $0) } }.sorted { $0.1 > $1.1 }
        if ends.count > 1 {
            let lag = ends[0].1.timeIntervalSince(ends[1].1)
            if lag >= 1 {
                lines.append(
                    "lagging: \(ends[0].0) finished its last attempt \(String(format: "%.1f", lag))s after the next host"
                )
            }
        }
        return lines
    }
}
