import Foundation
import OrchestrateModel

/// One self-contained HTML page per run: failures first, each scenario's verdict and the network differences that
/// explain it, and for every attempt that needs looking at its step timeline with the exchanges under each step
/// (request and response headers and bodies).
///
/// It works offline (no external resource) and runs no script at all: its Content-Security-Policy allows none, and
/// everything it shows — recorded bodies are untrusted input — is escaped. Sections fold with `<details>`.
package enum HTMLReport {
    /// Bodies longer than this are cut (the HAR attachment has them whole).
    package static let bodyLimit = 64 * 1024

    package static let contentSecurityPolicy =
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

    /// - Parameters:
    ///   - logs: the network logs of the attempts to show in detail, by attempt id.
    ///   - attachments: files per scenario id, linked by their paths relative to the report.
    ///   - kept: the files each attempt kept, as stored in the database (`orchestrate artifacts` writes them out).
    ///   - trends: each scenario's recent attempts, oldest first (``RunTimeline/trend(_:)``).
    package static func render(
        _ report: RunReport, logs: [Int64: NetworkLog], attachments: [String: [String]] = [:],
        kept: [Int64: KeptFiles] = [:],
        trends: [String: [TrendPoint]] = [:]
    ) -> String {
        let id = report.runID.uuidString.lowercased()
        let ordered = report.scenarios.enumerated().sorted { lhs, rhs in
            let (l, r) = (rank(lhs.element), rank(rhs.element))
            return l != r ? l < r : lhs.offset < rhs.offset
        }.map(\.element)
        var html = """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta http-equiv="Content-Security-Policy" content="\(escape(contentSecurityPolicy))">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>orchestrate run \(escape(id))</title>
            <style>\(style)</style>
            </head>
            <body>
            <h1>orchestrate run <code>\(escape(id))</code></h1>

            """
        html += "<p class=\"meta\">\(escape(summaryLine(report)))</p>\n"
        if let timeline = RunTimeline.svg(report) {
            html += "<details open class=\"timeline\"><summary><h2>Timeline</h2></summary>\n\(timeline)\n"
            html +=
                "<p class=\"legend\">a lane per worker slot, by host; a bar per attempt (passed, failed, timed out, crashed); "
            html += "lines join a failed attempt to its retry; shaded: a slot idle until the run's end</p></details>\n"
        }
        html += incidents(report)
        html += causes(report)
        // A row in the table and a section per scenario, each on its own: a large run's are made side by side.
        let parts = ordered.slicedSideBySide(minimumSlice: 250) { entries in
            var rows = "", sections = ""
            for entry in entries {
                rows += row(entry, trend: trends[entry.scenario.id] ?? [])
                sections += scenario(
                    entry, runID: report.runID, logs: logs, attachments: attachments[entry.scenario.id] ?? [],
                    kept: kept)
            }
            return (rows: rows, sections: sections)
        }
        html +=
            "<table class=\"summary\"><tr><th>Scenario</th><th>Result</th><th>Verdict</th><th>Attempts</th><th>Time</th>"
        html += "<th>Against expected</th><th>Recent attempts</th></tr>\n"
        for part in parts { html += part.rows }
        html += "</table>\n"
        for part in parts { html += part.sections }
        html += leftOut(report)
        html += "</body>\n</html>\n"
        return html
    }

    /// The scenario's row in the summary table.
    private static func row(_ entry: RunReport.ScenarioEntry, trend: [TrendPoint]) -> String {
        var html = "<tr><td><a href=\"#\(anchor(entry.scenario.id))\">\(escape(entry.scenario.name))</a></td>"
        html += "<td>\(badge(entry.result.rawValue))\(entry.quarantined ? " " + badge("quarantined") : "")"
        if entry.sampled { html += " " + badge(entry.selectionMiss ? "selection miss" : "sampled") }
        html += "\(entry.incident.map { " " + badge("incident \($0)") } ?? "")</td>"
        html += "<td>\(entry.verdict.map { badge($0.rawValue) } ?? "")</td><td>\(entry.attempts.count)</td>"
        html += "<td>\(milliseconds(entry.totalMilliseconds))</td>"
        html +=
            "<td>\(RunTimeline.againstExpected(actual: RunTimeline.settledMilliseconds(entry), expected: entry.expectedMilliseconds))</td>"
        return html + "<td>\(RunTimeline.trend(trend))</td></tr>\n"
    }

    /// The tests a selection left out (`run --changed-since`), each with why, folded: what chose the run's tests is in
    /// the summary line; a sampled test's badge says so in the table.
    private static func leftOut(_ report: RunReport) -> String {
        guard let selection = report.selection, !report.skipped.isEmpty else { return "" }
        var html = "<details class=\"skipped\"><summary><h2>Left out by the selection (\(report.skipped.count))</h2>"
        html += "</summary>\n<p>\(escape(selection))</p>\n<table><tr><th>Test</th><th>Why</th><th>Expected</th></tr>\n"
        for left in report.skipped {
            html += "<tr><td>\(escape(left.name))</td><td>\(escape(left.reason))</td>"
            html += "<td>\(left.expectedMilliseconds.map(milliseconds) ?? "")</td></tr>\n"
        }
        return html + "</table></details>\n"
    }

    /// The run's infrastructure incidents (``Incident``), each with its first and last failing exchange and the tests it
    /// hit, linked; empty without any.
    private static func incidents(_ report: RunReport) -> String {
        guard !report.incidents.isEmpty else { return "" }
        var html = "<section class=\"incidents\"><h2>Infrastructure incidents</h2>\n"
        for incident in report.incidents {
            html += "<p><strong>\(escape(incident.headline))</strong></p>\n<ul>"
            html += "<li>first: \(escape(Incident.describe(incident.first)))</li>"
            html += "<li>last: \(escape(Incident.describe(incident.last)))</li>"
            let tests = incident.scenarioIDs.map { "<a href=\"#\(anchor($0))\">\(escape($0))</a>" }
            html += "<li>tests: \(tests.joined(separator: ", "))</li></ul>\n"
        }
        html += "<p>An outage, not the tests: these attempts count in no flakiness score or quarantine.</p></section>\n"
        return html
    }

    /// The run's failures grouped by signature (``FailureSignature``, each test by its last failure's), the causes that
    /// hit the most tests first, each with its tests linked; empty when nothing failed.
    private static func causes(_ report: RunReport) -> String {
        var groups: [String: [String]] = [:]
        for entry in report.scenarios {
            guard let signature = entry.attempts.last(where: { $0.failed })?.signature
            else { continue }
            groups[signature, default: []].append(entry.scenario.id)
        }
        guard !groups.isEmpty else { return "" }
        let ordered = groups.sorted { ($0.value.count, $1.key) > ($1.value.count, $0.key) }
        var html = "<details open class=\"causes\"><summary><h2>Failures by cause</h2></summary>\n<table>"
        html += "<tr><th>Tests</th><th>Signature</th><th>Which</th></tr>\n"
        for (signature, ids) in ordered {
            let tests = ids.map { "<a href=\"#\(anchor($0))\">\(escape($0))</a>" }.joined(separator: ", ")
            html += "<tr><td>\(ids.count)</td><td><code>\(escape(signature))</code></td><td>\(tests)</td></tr>\n"
        }
        return html + "</table>\n<p class=\"legend\">numbers, ids, addresses and temporary paths made alike "
            + "(orchestrate failures lists them across runs)</p></details>\n"
    }

    /// Failing the run first, then the verdicts that need a look, then the rest.
    private static func rank(_ entry: RunReport.ScenarioEntry) -> Int {
        if entry.failsRun(strict: false) { return 0 }
        if entry.needsAttention { return 1 }
        return 2
    }

    private static func summaryLine(_ report: RunReport) -> String {
        var parts = [report.state.rawValue] + (report.mockTraffic ? ["mode \(report.mode.rawValue)"] : [])
        parts += ["started \(report.startedAt.formatted(.iso8601))", "host \(report.host)"]
        if let revision = report.gitRevision { parts.append("revision \(revision)") }
        let results = ScenarioResult.allCases.compactMap { result in
            report.count(result) > 0 ? "\(report.count(result)) \(result.rawValue)" : nil
        }
        parts.append(results.joined(separator: ", "))
        if !report.skipped.isEmpty { parts.append("\(report.skipped.count) left out by the selection") }
        return parts.joined(separator: " · ")
    }

    private static func scenario(
        _ entry: RunReport.ScenarioEntry, runID: UUID, logs: [Int64: NetworkLog], attachments: [String],
        kept: [Int64: KeptFiles]
    ) -> String {
        let open = rank(entry) < 2 ? " open" : ""
        var html =
            "<section id=\"\(anchor(entry.scenario.id))\" class=\"scenario \(escape(entry.verdict?.rawValue ?? entry.result.rawValue))\">\n"
        html += "<details\(open)><summary><h2>\(escape(entry.scenario.name)) \(badge(entry.result.rawValue))"
        if let verdict = entry.verdict { html += " " + badge(verdict.rawValue) }
        if entry.quarantined { html += " " + badge("quarantined") }
        html += "</h2></summary>\n"
        html += "<p class=\"meta\"><code>\(escape(entry.scenario.id))</code>"
        if let location = entry.location {
            html += " · \(escape(location.file))\(location.line.map { ":\($0)" } ?? "")"
        }
        html += "</p>\n"
        if let reason = entry.verdictReason { html += "<p class=\"reason\">\(escape(reason))</p>\n" }
        if !entry.evidence.isEmpty {
            html +=
                "<h3>What changed on the network</h3>\n<table class=\"diff\"><tr><th>Step</th><th>Request</th><th>Change</th><th>Recorded</th><th>Live</th></tr>\n"
            for difference in entry.evidence {
                html +=
                    "<tr><td>\(escape(difference.place ?? "—"))</td><td><code>\(escape(difference.request))</code></td>"
                html +=
                    "<td>\(escape(difference.kind.rawValue))\(difference.path.map { " <code>\(escape($0))</code>" } ?? "")</td>"
                html +=
                    "<td><code>\(escape(difference.recorded ?? ""))</code></td><td><code>\(escape(difference.live ?? ""))</code></td></tr>\n"
            }
            html += "</table>\n"
        }
        if !attachments.isEmpty {
            html +=
                "<p>Attachments: "
                + attachments.map {
                    "<a href=\"\(escape(relative($0)))\">\(escape(($0 as NSString).lastPathComponent))</a>"
                }
                .joined(separator: " · ") + "</p>\n"
        }
        for attempt in entry.attempts {
            html += self.attempt(attempt, summary: entry.summary(of: attempt), log: logs[attempt.id])
        }
        let files = entry.attempts.flatMap { attempt in (kept[attempt.id]?.files ?? []).map { (attempt, $0) } }
        if !files.isEmpty {
            html += "<p class=\"kept\">Kept: "
            html += files.map { attempt, file in
                "\(escape(AttemptName.of(attempt: attempt.attempt, lane: attempt.lane)))/\(escape(file.path)) (\(file.bytes) bytes\(file.stored ? "" : ", over the cap: not stored"))"
            }.joined(separator: " · ")
            for attempt in entry.attempts {
                if let note = kept[attempt.id]?.leftOutNote {
                    html +=
                        " · \(escape(AttemptName.of(attempt: attempt.attempt, lane: attempt.lane))): \(escape(note))"
                }
            }
            html +=
                " — <code>orchestrate artifacts \(runID.uuidString.lowercased()) \(escape(ShellWord.quote(entry.scenario.id))) --out DIR</code></p>\n"
        }
        html += "</details>\n</section>\n"
        return html
    }

    private static func attempt(_ attempt: AttemptRecord, summary: String, log: NetworkLog?) -> String {
        let title =
            "\(attempt.lane.map { "\($0.rawValue) " } ?? "")attempt \(attempt.attempt): \(summary)"
            + " in \(milliseconds(attempt.durationMilliseconds ?? 0))\(attempt.worker.map { " on \($0)" } ?? "")"
        var html = "<div class=\"attempt \(escape(attempt.outcome?.rawValue ?? "open"))\"><h3>\(escape(title))</h3>\n"
        if let error = attempt.error { html += "<pre class=\"error\">\(escape(error))</pre>\n" }
        if !attempt.stderr.isEmpty {
            html += "<details><summary>stderr</summary><pre>\(escape(attempt.stderr))</pre></details>\n"
        }
        if let log {
            let timeline = StepTimeline(log, attempt: attempt)
            if !timeline.rows.isEmpty {
                html += "<ol class=\"steps\">\n"
                for row in timeline.rows {
                    let duration = row.milliseconds.map(milliseconds) ?? "open"
                    html +=
                        "<li class=\"step \(escape(row.step.status.rawValue))\"><span class=\"time\">\(row.offset) · \(duration)</span> "
                    html += "\(badge(row.step.status.rawValue)) \(escape(row.title))\n"
                    if let error = row.step.error, !error.isEmpty {
                        html += "<pre class=\"error\">\(escape(error))</pre>\n"
                    }
                    html += row.exchanges.map(exchange).joined()
                    html += "</li>\n"
                }
                html += "</ol>\n"
            }
            if !timeline.outside.isEmpty {
                html +=
                    "<p>\(log.steps.isEmpty ? "Exchanges" : "Exchanges outside steps"):</p>\n"
                    + timeline.outside.map(exchange).joined()
            }
        }
        html += "</div>\n"
        return html
    }

    private static func exchange(_ exchange: Exchange) -> String {
        let status = exchange.status.map(String.init) ?? "no response"
        var html =
            "<details class=\"exchange\(exchange.matched ? "" : " unmatched")\"><summary><code>\(escape(exchange.method)) \(escape(exchange.url))</code>"
        html +=
            " → \(escape(status)) · \(milliseconds(exchange.durationMicroseconds / 1000))\(exchange.matched ? "" : " · unmatched")</summary>\n"
        if let note = exchange.note { html += "<p class=\"note\">\(escape(note.rawValue))</p>\n" }
        html += "<h4>Request</h4>\(headers(exchange.requestHeaders))\(body(exchange.requestBody))"
        html += "<h4>Response</h4>\(headers(exchange.responseHeaders))\(body(exchange.responseBody))</details>\n"
        return html
    }

    private static func headers(_ headers: [Exchange.Header]) -> String {
        guard !headers.isEmpty else { return "" }
        return "<pre class=\"headers\">"
            + headers.map { "\(escape($0.name)): \(escape($0.value))" }.joined(separator: "\n") + "</pre>\n"
    }

    private static func body(_ bytes: [UInt8]) -> String {
        guard !bytes.isEmpty else { return "" }
        guard let text = String(validating: bytes.prefix(bodyLimit), as: UTF8.self) else {
            return "<p class=\"meta\">\(bytes.count) bytes of binary content (see the HAR attachment)</p>\n"
        }
        let cut = bytes.count > bodyLimit ? "\n… \(bytes.count - bodyLimit) more bytes in the HAR attachment" : ""
        return "<pre class=\"body\">\(escape(text + cut))</pre>\n"
    }

    private static func badge(_ text: String) -> String {
        "<span class=\"badge \(escape(text))\">\(escape(text))</span>"
    }

    private static func anchor(_ id: String) -> String {
        // Twice per test in every report: an ASCII id is made byte by byte, and needs no escaping.
        if id.utf8.allSatisfy({ $0 < 0x80 }) {
            return String(
                decoding: Array("s-".utf8)
                    + id.utf8.map { byte in
                        switch byte {
                        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                            UInt8(ascii: "0")...UInt8(ascii: "9"):
                            byte
                        default: UInt8(ascii: "-")
                        }
                    }, as: UTF8.self)
        }
        var name = "s-"
        name.unicodeScalars.append(
            contentsOf: id.unicodeScalars.lazy.map { scalar in
                let kept =
                    scalar.isASCII
                    ? ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
                    : scalar.properties.isAlphabetic
                return kept ? scalar : "-"
            }
        )
        return escape(name)
    }

    private static func milliseconds(_ value: Int64) -> String {
        value >= 10_000 ? String(format: "%.1f s", Double(value) / 1000) : "\(value) ms"
    }

    /// Attachments live under the report's folder; links are relative so the folder can move.
    private static func relative(_ path: String) -> String {
        guard let range = path.range(of: "/attachments/") else { return path }
        return "attachments/" + path[range.upperBound...]
    }

    static func escape(_ text: String) -> String { XMLText.escape(text) }

    private static let style = """
        body{font:14px/1.45 system-ui,sans-serif;margin:2em;color:#222}code,pre{font-family:ui-monospace,monospace;font-size:12px}\
        pre{background:#f6f6f6;padding:.5em;overflow-x:auto;white-space:pre-wrap;word-break:break-all}\
        table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ddd;padding:.25em .5em;text-align:left;vertical-align:top}\
        .badge{display:inline-block;border-radius:3px;padding:0 .4em;font-size:12px;background:#ddd}\
        .badge.failed,.badge.failing,.badge.timed-out,.badge.crashed{background:#f4b4b4}.badge.passed,.badge.stable{background:#bde5bd}\
        .badge.flaky,.badge.nondeterministic,.badge.quarantined{background:#f7dc9c}.badge.drift,.badge.stale-recording{background:#c9d7f5}\
        .meta{color:#666}.reason{font-weight:600}.error{background:#fdecec}.unmatched summary{color:#b00}\
        h2{display:inline;font-size:1.1em}summary{cursor:pointer}section{border-top:1px solid #ccc;padding:.5em 0}\
        .steps li{margin:.3em 0}.time{color:#666;font-family:ui-monospace,monospace;font-size:12px}.exchange{margin-left:1em}\
        svg text{font:11px system-ui,sans-serif;fill:#444}svg text.host{font-weight:600;fill:#222}.timeline svg{max-width:100%;height:auto}\
        .bar{fill:#9e9e9e;stroke:#fff;stroke-width:1}.bar.passed,.trend .passed{fill:#5cb85c}.bar.failed,.bar.crashed,.trend .failed{fill:#d9534f}\
        .bar.timed-out{fill:#f0ad4e}.bar.infrastructure-error{fill:#8e6cc4}.idle{fill:#eee}.retry{stroke:#d9534f;stroke-width:1.5;stroke-dasharray:3 2}\
        .versus .expected{fill:#bbb}.versus .actual{fill:#5b8def}.versus .actual.slow{fill:#d9534f}.legend{color:#666;font-size:12px}
        """
}
