import Foundation
import OrchestrateModel
import Store

/// GitHub Actions' workflow commands for a judged run: an `::error` per test that fails the run, a `::warning` per
/// flaky, nondeterministic or quarantined one, each at the test's own place (``RunReport/ScenarioEntry/location``).
/// Values are escaped as GitHub's toolkit escapes them (`escapeData`, `escapeProperty`), so no test name or message
/// can end a command early or start another.
package enum GitHubAnnotations {
    /// At most this many of each kind: GitHub shows no more than 10 errors and 10 warnings of a step; the rest are
    /// counted in a notice and listed in the summary.
    package static let maximum = 10

    /// `strict`: `--strict`, under which a flaky test fails the run (an error).
    package static func commands(for report: RunReport, strict: Bool = false) -> [String] {
        var errors: [String] = []
        var warnings: [String] = []
        var left = 0
        for entry in report.scenarios {
            let kind: String
            let title: String
            if entry.failedByIncident {
                continue
            } else if entry.failsRun(strict: strict) {
                (kind, title) = ("error", "\(entry.scenario.id) \(entry.result == .failed ? "failed" : "is flaky")")
            } else if entry.result == .failed, entry.quarantined {
                (kind, title) = ("warning", "\(entry.scenario.id) failed (quarantined)")
            } else if entry.result == .flaky || entry.verdict == .nondeterministic {
                (kind, title) = ("warning", "\(entry.scenario.id) is flaky")
            } else {
                continue
            }
            guard (kind == "error" ? errors : warnings).count < maximum else {
                left += 1
                continue
            }
            var properties: [String] = []
            if let location = entry.location {
                properties.append("file=\(escapeProperty(location.file))")
                if let line = location.line { properties.append("line=\(line)") }
            }
            properties.append("title=\(escapeProperty(title))")
            let command = "::\(kind) \(properties.joined(separator: ","))::\(escapeData(message(entry)))"
            if kind == "error" { errors.append(command) } else { warnings.append(command) }
        }
        // An outage is one error (before the tests'), not one per test it failed.
        let outages = report.incidents.prefix(maximum).map { incident in
            "::error title=\(escapeProperty("infrastructure incident \(incident.number)"))::"
                + escapeData("\(incident.headline)\nfirst: \(Incident.describe(incident.first))")
        }
        var commands = Array(outages) + errors.prefix(maximum - outages.count) + warnings
        left += max(0, errors.count - (maximum - outages.count))
        if left > 0 {
            commands.append("::notice::\(escapeData("\(left) more tests failed or were flaky: see the job summary"))")
        }
        return commands
    }

    /// Why the test needs a look: its verdict's reason, its last failure, and the first network differences.
    static func message(_ entry: RunReport.ScenarioEntry) -> String {
        let failed = entry.attempts.last { $0.failed }
        var lines = [entry.verdictReason, failed.map { "attempt \($0.attempt) \($0.failureSummary)" }].compactMap { $0 }
        lines += entry.evidence.prefix(3).map { "\($0.place.map { "\($0): " } ?? "")\($0)" }
        return lines.joined(separator: "\n")
    }

    /// A command's message, as the toolkit's `escapeData`: `%`, CR and LF.
    package static func escapeData(_ text: String) -> String {
        text.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: "\r", with: "%0D")
            .replacingOccurrences(of: "\n", with: "%0A")
    }

    /// A command's property, as the toolkit's `escapeProperty`: also `:` and `,`.
    package static func escapeProperty(_ text: String) -> String {
        escapeData(text).replacingOccurrences(of: ":", with: "%3A").replacingOccurrences(of: ",", with: "%2C")
    }
}

/// The run in Markdown, for a CI system's job summary (`$GITHUB_STEP_SUMMARY`, `--summary PATH`): its counts, the
/// failures (new ones marked) and flaky tests with their evidence, the verdicts, the slowest tests, the hosts, and
/// where the HTML report is. Everything from outside (test ids, messages, host names) is text: every ASCII
/// punctuation character backslash-escaped, line breaks made spaces, so no name makes a link, an image, HTML or a new
/// table cell.
package enum MarkdownSummary {
    package static func render(
        _ report: RunReport, hosts: [HostShare], earlier: [String: [TrendPoint]], report html: String,
        runURL: String? = nil
    ) -> String {
        let elapsed = (report.finishedAt ?? Date()).timeIntervalSince(report.startedAt)
        let counts = RunSummaryText.counts(report)
        var lines = [
            "## orchestrate: \(counts.joined(separator: ", ")) of \(report.scenarios.count) tests in "
                + String(format: "%.1f s", elapsed),
            "",
            "Run \(text(report.runID.uuidString.lowercased()))"
                + (report.gitRevision.map { " at revision \(text(String($0.prefix(12))))" } ?? "")
                + " · \(text(report.state.rawValue))",
        ]
        if let selection = RunSummaryText.selectionLine(report) { lines += ["", text(selection)] }
        if !report.incidents.isEmpty {
            lines += ["", "### Infrastructure incidents", ""]
            for incident in report.incidents {
                lines.append(
                    "- \(text(incident.headline)); first: \(text(Incident.describe(incident.first))); "
                        + "tests: \(text(incident.scenarioIDs.prefix(rows).joined(separator: ", ")))")
            }
        }
        let failing = report.scenarios.filter { $0.result == .failed && $0.incident == nil }
        if !failing.isEmpty {
            lines += ["", "### Failed", "", "| Test | Where | Why |", "| --- | --- | --- |"]
            for entry in failing.prefix(rows) {
                let new = isNewFailure(earlier: earlier[entry.scenario.id] ?? [])
                let tags = (new ? " **new**" : "") + (entry.quarantined ? " (quarantined)" : "")
                let why = text(shortened(GitHubAnnotations.message(entry)))
                lines.append("| \(text(entry.scenario.id))\(tags) | \(place(entry)) | \(why) |")
            }
            if failing.count > rows {
                lines += ["", "… and \(failing.count - rows) more failed: see the HTML report."]
            }
        }
        let flaky = report.scenarios.filter {
            $0.result != .failed && ($0.result == .flaky || $0.verdict == .nondeterministic)
        }
        if !flaky.isEmpty {
            lines += ["", "### Flaky", "", "| Test | Evidence |", "| --- | --- |"]
            for entry in flaky.prefix(rows) {
                lines.append("| \(text(entry.scenario.id)) | \(text(shortened(GitHubAnnotations.message(entry)))) |")
            }
            if flaky.count > rows { lines += ["", "… and \(flaky.count - rows) more flaky: see the HTML report."] }
        }
        let verdicts = RunSummaryText.verdicts(report)
        if !verdicts.isEmpty { lines += ["", "**Verdicts:** \(text(verdicts.joined(separator: ", ")))"] }
        let slowest = report.scenarios.filter { !$0.attempts.isEmpty }.sorted {
            $0.totalMilliseconds > $1.totalMilliseconds
        }.prefix(5)
        if !slowest.isEmpty {
            lines += ["", "### Slowest tests", "", "| Test | Time | Attempts |", "| --- | ---: | ---: |"]
            for entry in slowest {
                lines.append(
                    "| \(text(entry.scenario.id)) | \(String(format: "%.1f s", Double(entry.totalMilliseconds) / 1000))"
                        + " | \(entry.attempts.count) |")
            }
        }
        if !hosts.isEmpty {
            lines += ["", "### Hosts", "", "| Host | Slots | Attempts | Busy |", "| --- | ---: | ---: | ---: |"]
            for host in hosts {
                lines.append(
                    "| \(text(host.host)) | \(host.slots) | \(host.finished) | "
                        + String(format: "%.1f s", Double(host.busyMilliseconds) / 1000) + " |")
            }
        }
        lines += [
            "",
            "The HTML report: \(text(html))"
                + (runURL.map { " (the workflow run's artifacts: [\(text("the run"))](\(destination($0))))" } ?? ""),
            "",
        ]
        return lines.joined(separator: "\n")
    }

    /// The rows of a table at most (GitHub drops a step summary past 1 MiB); the HTML report has them all.
    static let rows = 50

    /// A message cut to 500 characters.
    static func shortened(_ message: String) -> String {
        message.count > 500 ? String(message.prefix(499)) + "…" : message
    }

    /// A failure that is new: the test's attempt before this run (the last of `earlier`) passed, or it has none.
    static func isNewFailure(earlier: [TrendPoint]) -> Bool {
        earlier.last?.passed ?? true
    }

    static func place(_ entry: RunReport.ScenarioEntry) -> String {
        guard let location = entry.location else { return "" }
        return text(location.file + (location.line.map { ":\($0)" } ?? ""))
    }

    /// Text from outside, as Markdown that says it literally: one line, every ASCII punctuation character escaped,
    /// control characters shown as escapes.
    package static func text(_ value: String) -> String {
        var result = ""
        for character in TerminalText.escaped(value.replacingOccurrences(of: "\r\n", with: " ")) {
            if character == "\n" || character == "\r" || character == "\t" {
                result.append(" ")
            } else if let ascii = character.asciiValue, ascii.isPunctuation {
                result.append("\\")
                result.append(character)
            } else {
                result.append(character)
            }
        }
        return result
    }

    /// A link's destination: the URL in angle brackets, with what would end them percent-encoded.
    static func destination(_ url: String) -> String {
        "<"
            + url.replacingOccurrences(of: "<", with: "%3C").replacingOccurrences(of: ">", with: "%3E")
            .replacingOccurrences(of: " ", with: "%20").replacingOccurrences(of: "\n", with: "") + ">"
    }
}

extension UInt8 {
    /// ASCII punctuation, as CommonMark counts it: what a backslash escapes.
    fileprivate var isPunctuation: Bool {
        (0x21...0x2F).contains(self) || (0x3A...0x40).contains(self) || (0x5B...0x60).contains(self)
            || (0x7B...0x7E).contains(self)
    }
}
