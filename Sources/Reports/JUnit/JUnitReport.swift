import Foundation
import OrchestrateModel

/// JUnit XML for CI reporters (GitLab, Jenkins, GitHub actions that read JUnit): one testcase per
/// scenario, its attempts in `system-out`, flaky passes as Surefire's `flakyFailure` elements and a
/// property, retries of a failure as `rerunFailure`. The verdict and its reason are properties, the network
/// differences that explain it are in `system-out`, and attached files are referenced there as
/// `[[ATTACHMENT|/path]]` (Jenkins' JUnit attachments, GitLab's artifacts). A quarantined failure is `skipped`; a failure
/// that was only an infrastructure incident's (``Incident``) is an `error` whose message is the incident's.
package enum JUnitReport {
    /// - Parameter attachments: files per scenario id (absolute paths).
    package static func render(_ report: RunReport, attachments: [String: [String]] = [:]) -> String {
        let entries = report.scenarios
        let incidents = Dictionary(report.incidents.map { ($0.number, $0) }, uniquingKeysWith: { first, _ in first })
        func incident(_ entry: RunReport.ScenarioEntry) -> Incident? {
            entry.failedByIncident ? entry.incident.flatMap { incidents[$0] } : nil
        }
        let failures = entries.filter { $0.result == .failed && !$0.quarantined && incident($0) == nil }.count
        let errors = entries.filter { !$0.quarantined && incident($0) != nil }.count
        // Tests a selection left out are testcases too, skipped with their reason, so the CI's history keeps them.
        let skipped =
            entries.filter { $0.result == .pending || ($0.result == .failed && $0.quarantined) }.count
            + report.skipped.count
        let milliseconds = entries.reduce(0) { $0 + $1.totalMilliseconds }
        let timestamp = report.startedAt.formatted(.iso8601)
        var xml = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
        let counts =
            #"tests="\#(entries.count + report.skipped.count)" failures="\#(failures)" errors="\#(errors)" skipped="\#(skipped)" time="\#(seconds(milliseconds))""#
        xml += #"<testsuites name="orchestrate" \#(counts) timestamp="\#(timestamp)">"# + "\n"
        xml +=
            #"  <testsuite name="orchestrate" \#(counts) timestamp="\#(timestamp)" hostname="\#(XMLText.escape(report.host))">"#
            + "\n"
        xml += "    <properties>\n"
        xml += property("orchestrate.run_id", report.runID.uuidString.lowercased(), indent: 6)
        xml += property("orchestrate.run_state", report.state.rawValue, indent: 6)
        if let revision = report.gitRevision { xml += property("git.revision", revision, indent: 6) }
        xml += "    </properties>\n"
        // Scenarios of one feature file share their class name: worked out once per file.
        var classNames: [String: String] = [:]
        let notRun =
            report.stopReason.map { "not run: \($0)" }
            ?? "not finished: the run was interrupted (orchestrate run --resume)"
        for entry in entries {
            let uri = entry.scenario.uri ?? ""
            let className =
                classNames[uri]
                ?? {
                    let name = Self.className(entry.scenario)
                    classNames[uri] = name
                    return name
                }()
            xml += testcase(
                entry, className: className, attachments: attachments[entry.scenario.id] ?? [],
                incident: incident(entry), notRun: notRun)
        }
        for left in report.skipped {
            xml += leftOut(left)
        }
        xml += "  </testsuite>\n</testsuites>\n"
        return xml
    }

    /// A test a selection left out: skipped, with why, under the names a run of it would have.
    private static func leftOut(_ left: RunReport.Skipped) -> String {
        let scenario = Scenario(id: left.id, name: left.name, command: "", timeoutMilliseconds: 0, uri: left.uri)
        let (className, name) = left.runnerTest ? Self.runnerNames(left.id) : (Self.className(scenario), left.name)
        var xml =
            #"    <testcase name="\#(XMLText.escape(name))" classname="\#(XMLText.escape(className))" time="0">"# + "\n"
        xml += "      <properties>\n"
        xml += property("orchestrate.scenario_id", left.id, indent: 8)
        xml += property("orchestrate.result", "not-selected", indent: 8)
        xml += "      </properties>\n"
        xml += #"      <skipped message="\#(XMLText.escape("not selected: \(left.reason)"))"/>"# + "\n"
        xml += "    </testcase>\n"
        return xml
    }

    /// `incident`: the infrastructure incident its failures were all part of, reported as an `error` (not a failure of
    /// the test).
    /// `notRun`: why a test the run did not finish was not, as its `skipped` message says.
    private static func testcase(
        _ entry: RunReport.ScenarioEntry, className: String, attachments: [String], incident: Incident?,
        notRun: String
    ) -> String {
        let scenario = entry.scenario
        // A test of a runner's suite keeps the runner's names (SwiftPM's `Module.Class` and `test`, pytest's module and
        // function), so that CI systems merge its history with the runner's own reports.
        let (className, name) =
            scenario.isRunnerTest
            ? Self.runnerNames(scenario.id) : (className, scenario.name)
        var attributes = #"name="\#(XMLText.escape(name))" classname="\#(XMLText.escape(className))""#
        attributes += #" time="\#(seconds(entry.attempts.last?.durationMilliseconds ?? 0))""#
        if let location = entry.location {
            attributes += #" file="\#(XMLText.escape(location.file))""#
            if let line = location.line { attributes += #" line="\#(line)""# }
        }
        var xml = "    <testcase \(attributes)>\n"
        xml += "      <properties>\n"
        xml += property("orchestrate.scenario_id", scenario.id, indent: 8)
        xml += property("orchestrate.result", entry.result.rawValue, indent: 8)
        xml += property("orchestrate.attempts", "\(entry.attempts.count)", indent: 8)
        if entry.result == .flaky || entry.verdict == .nondeterministic { xml += property("flaky", "true", indent: 8) }
        if let verdict = entry.verdict { xml += property("orchestrate.verdict", verdict.rawValue, indent: 8) }
        if let reason = entry.verdictReason { xml += property("orchestrate.verdict_reason", reason, indent: 8) }
        if entry.quarantined { xml += property("orchestrate.quarantined", "true", indent: 8) }
        xml += "      </properties>\n"
        let failedAttempts = entry.attempts.filter { $0.failed }
        switch entry.result {
        case .failed where entry.quarantined:
            let last = failedAttempts.last.map { "attempt \($0.attempt) \($0.failureSummary)" } ?? "failed"
            xml +=
                #"      <skipped message="\#(XMLText.escape("quarantined (orchestrate quarantine list): \(last)"))"/>"#
                + "\n"
        case .failed where incident != nil:
            if let incident, let last = failedAttempts.last {
                let body = detail(last, summary: entry.summary(of: last))
                xml +=
                    #"      <error message="\#(XMLText.escape(incident.headline))" type="infrastructure">\#(XMLText.escape(body))</error>"#
                    + "\n"
            }
        case .failed:
            if let last = failedAttempts.last {
                xml += element("failure", last, summary: entry.summary(of: last), indent: 6)
                for earlier in failedAttempts.dropLast() {
                    xml += element("rerunFailure", earlier, summary: entry.summary(of: earlier), indent: 6)
                }
            }
        case .flaky:
            for attempt in failedAttempts {
                xml += element("flakyFailure", attempt, summary: entry.summary(of: attempt), indent: 6)
            }
        case .pending:
            xml += #"      <skipped message="\#(XMLText.escape(notRun))"/>"# + "\n"
        case .passed:
            break
        }
        var log = entry.attempts.map { attempt in
            "\(attempt.lane.map { "\($0.rawValue) " } ?? "")attempt \(attempt.attempt): \(entry.summary(of: attempt)) in \(attempt.durationMilliseconds ?? 0) ms on \(attempt.worker ?? "?")\n"
                + (attempt.stdout.isEmpty ? "" : attempt.stdout + (attempt.stdout.hasSuffix("\n") ? "" : "\n"))
        }.joined()
        if let verdict = entry.verdict, verdict != .stable {
            log += "verdict: \(verdict.rawValue): \(entry.verdictReason ?? "")\n"
            for difference in entry.evidence { log += "  \(difference.place.map { "\($0): " } ?? "")\(difference)\n" }
        }
        for path in attachments { log += "[[ATTACHMENT|\(path)]]\n" }
        if !log.isEmpty { xml += "      <system-out>\(XMLText.escape(log))</system-out>\n" }
        let errors = entry.attempts.map(\.stderr).filter { !$0.isEmpty }.joined(separator: "\n")
        if !errors.isEmpty { xml += "      <system-err>\(XMLText.escape(errors))</system-err>\n" }
        xml += "    </testcase>\n"
        return xml
    }

    /// A failed attempt's element: `summary` (``RunReport/ScenarioEntry/summary(of:)``) its message, and with its
    /// error and standard error its body.
    private static func element(_ name: String, _ attempt: AttemptRecord, summary: String, indent: Int) -> String {
        let pad = String(repeating: " ", count: indent)
        let type = attempt.outcome?.rawValue ?? "unknown"
        let body = detail(attempt, summary: summary)
        return
            #"\#(pad)<\#(name) message="\#(XMLText.escape("attempt \(attempt.attempt) \(summary)"))" type="\#(type)">\#(XMLText.escape(body))</\#(name)>"#
            + "\n"
    }

    private static func detail(_ attempt: AttemptRecord, summary: String) -> String {
        var text = "attempt \(attempt.attempt) \(summary)"
        if let error = attempt.error { text += "\n\(error)" }
        if !attempt.stderr.isEmpty { text += "\n--- stderr ---\n" + attempt.stderr }
        return text
    }

    private static func property(_ name: String, _ value: String, indent: Int) -> String {
        String(repeating: " ", count: indent)
            + #"<property name="\#(XMLText.escape(name))" value="\#(XMLText.escape(value))"/>"# + "\n"
    }

    /// The feature file (without extension) when known, else the first tag, else `orchestrate`. A runner's test id as
    /// JUnit's class and test names: `Module.Class/test` and `Module.Suite/func()` at the last `/`, Swift Testing's
    /// `Module.func()` at the first `.`, pytest's `tests/test_shop.py::TestCart::test_add` at the last `::` (the file
    /// as a dotted module).
    static func runnerNames(_ id: String) -> (className: String, name: String) {
        // Foundation's search is slow, and only pytest's ids hold a `::`: their bytes say so first.
        let colon = UInt8(ascii: ":")
        if zip(id.utf8, id.utf8.dropFirst()).contains(where: { $0 == colon && $1 == colon }),
            let separator = id.range(of: "::", options: .backwards)
        {
            var parts = id[..<separator.lowerBound].components(separatedBy: "::")
            parts[0] = (parts[0] as NSString).deletingPathExtension.replacingOccurrences(of: "/", with: ".")
            return (parts.joined(separator: "."), String(id[separator.upperBound...]))
        }
        if let slash = id.lastIndex(of: "/") { return (String(id[..<slash]), String(id[id.index(after: slash)...])) }
        if id.hasSuffix(")"), let dot = id.firstIndex(of: "."), dot < (id.firstIndex(of: "(") ?? id.endIndex) {
            return (String(id[..<dot]), String(id[id.index(after: dot)...]))
        }
        return ("orchestrate", id)
    }

    private static func className(_ scenario: Scenario) -> String {
        if let uri = scenario.uri {
            return ((uri as NSString).deletingPathExtension).replacingOccurrences(of: "/", with: ".")
        }
        return "orchestrate"
    }

    /// Milliseconds as seconds with three decimals (`1.050`), without a formatter (thousands of them in a large run).
    static func seconds<N: BinaryInteger>(_ milliseconds: N) -> String {
        let value = Int64(milliseconds)
        let sign = value < 0 ? "-" : ""
        let fraction = String(abs(value) % 1000)
        return "\(sign)\(abs(value) / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }
}
