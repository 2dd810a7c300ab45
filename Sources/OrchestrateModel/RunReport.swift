import struct Foundation.Date
import struct Foundation.UUID

/// Everything a report needs about one run: the run, its scenarios, their attempts.
package struct RunReport: Sendable, Codable {
    package struct ScenarioEntry: Sendable, Codable {
        package var scenario: Scenario
        package var result: ScenarioResult
        package var attempts: [AttemptRecord]
        /// Why it ended so (set when the run is judged), the sentence that says it, and the network differences
        /// that explain it.
        package var verdict: Verdict?
        package var verdictReason: String?
        package var evidence: [NetworkDifference]
        /// It was quarantined when the run started: a failure is reported, not fatal (unless --strict).
        package var quarantined: Bool
        /// What the planner expected it to take (the median of its recent passes); `nil` when never seen.
        package var expectedMilliseconds: Int64?
        /// A selection would have left it out: it ran as a sample (`--sample`), and its failure is a selection miss.
        package var sampled = false

        /// A failure the selection would have missed: sampled, and failed (not by an incident).
        package var selectionMiss: Bool { sampled && result == .failed && incident == nil }

        package init(
            scenario: Scenario, result: ScenarioResult, attempts: [AttemptRecord], verdict: Verdict? = nil,
            verdictReason: String? = nil,
            evidence: [NetworkDifference] = [], quarantined: Bool = false
        ) {
            self.scenario = scenario
            self.result = result
            self.attempts = attempts
            self.verdict = verdict
            self.verdictReason = verdictReason
            self.evidence = evidence
            self.quarantined = quarantined
        }

        /// Not a plain pass: failed, flaky, unfinished, or a verdict other than stable. Reports show its attempts in
        /// detail.
        package var needsAttention: Bool { result != .passed || (verdict != nil && verdict != .stable) }

        /// Whether it makes the run fail: a failure (not an incident's: ``failedByIncident``), or a verdict that needs
        /// action (failing, drift, stale recording) — unless quarantined, which only `strict` overrides.
        package func failsRun(strict: Bool) -> Bool {
            let bad =
                (result == .failed && incident == nil) || result == .pending
                || [.failing, .drift, .staleRecording].contains(verdict)
                || (strict && incident == nil && (result == .flaky || verdict == .nondeterministic))
            return bad && (!quarantined || strict)
        }

        /// It failed, and every failure was an infrastructure incident's (``incident``): the run exits 3 for it, not 1.
        package var failedByIncident: Bool { result == .failed && incident != nil }

        package var totalMilliseconds: Int64 { attempts.reduce(0) { $0 + ($1.durationMilliseconds ?? 0) } }
    }

    package var runID: UUID
    package var state: RunState
    package var startedAt: Date
    package var finishedAt: Date?
    package var host: String
    package var gitRevision: String?
    package var mode: Mode
    package var scenarios: [ScenarioEntry]
    /// Whether any attempt of the run made an exchange through its mock server. A run without (a plain suite) is
    /// reported without the vocabulary of backends: no mode, no replay or live lanes, no empty HAR files.
    package var mockTraffic = true
    /// Its upstreams' outages (``Incident``), each reported once; set when the run is judged.
    package var incidents: [Incident] = []
    /// What chose its tests (`changed since main (3 files)`), when a selection left some out; `nil`: the whole suite.
    package var selection: String?
    /// The tests the selection left out, in the suite's order.
    package var skipped: [Skipped] = []
    /// Why the run stopped before its end (`run --fail-fast N`): what it had not run is not run.
    package var stopReason: String?

    /// A test a selected run left out, and why.
    package struct Skipped: Sendable, Codable, Equatable {
        package var id: String
        package var name: String
        /// Its feature file, and whether a runner reported it: what a report names it by.
        package var uri: String?
        package var runnerTest: Bool
        package var reason: String
        /// What history expected it to take.
        package var expectedMilliseconds: Int64?

        package init(
            id: String, name: String, uri: String? = nil, runnerTest: Bool = false, reason: String,
            expectedMilliseconds: Int64?
        ) {
            self.id = id
            self.name = name
            self.uri = uri
            self.runnerTest = runnerTest
            self.reason = reason
            self.expectedMilliseconds = expectedMilliseconds
        }
    }

    /// What leaving tests out saved, by history (tests never timed count nothing).
    package var savedMilliseconds: Int64 { skipped.reduce(0) { $0 + ($1.expectedMilliseconds ?? 0) } }

    package init(
        runID: UUID, state: RunState, startedAt: Date, finishedAt: Date?, host: String, gitRevision: String?,
        mode: Mode = .replay,
        scenarios: [ScenarioEntry]
    ) {
        self.mode = mode
        self.runID = runID
        self.state = state
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.host = host
        self.gitRevision = gitRevision
        self.scenarios = scenarios
    }

    package func count(_ result: ScenarioResult) -> Int { scenarios.filter { $0.result == result }.count }
}

extension RunReport.ScenarioEntry {
    /// An attempt's one-line summary, with the evidence that justified its retry when it was retried
    /// (`exited with status 22; retried: GET api.test/v1/pay → 503 at step 1`).
    package func summary(of attempt: AttemptRecord) -> String {
        let retried = attempts.contains { $0.lane == attempt.lane && $0.attempt > attempt.attempt }
        guard retried, let evidence = attempt.evidence else { return attempt.failureSummary }
        return attempt.failureSummary + "; retried: " + evidence
    }

    /// Where the test is, for reports and annotations. A scenario written in orchestrate.yml or a feature file: its own
    /// place there. A test its runner listed: where its last failure happened when the runner said (`file:line: …`
    /// leading the failure), else the file its id names (pytest's `path::name`, a jest file); else none, never the line
    /// of orchestrate.yml that lists the suite.
    package var location: (file: String, line: Int?)? {
        if let uri = scenario.uri { return (uri, scenario.line) }
        if let failed = attempts.last(where: { $0.failed }),
            let place = Self.leadingPlace(failed.error ?? "")
        {
            return place
        }
        return Self.file(namedBy: scenario.id).map { ($0, nil) }
    }

    /// The file a test's id names: pytest's `path::name`, a jest file's path; `nil` when it names none.
    package static func file(namedBy id: String) -> String? {
        // The first "::", found byte by byte (once per test in every report of a run).
        let bytes = id.utf8
        let separator = bytes.indices.first { index in
            bytes[index] == UInt8(ascii: ":") && bytes.index(after: index) < bytes.endIndex
                && bytes[bytes.index(after: index)] == UInt8(ascii: ":")
        }
        let head = separator.map { String(id[..<$0]) } ?? id
        guard separator != nil || id.utf8.contains(UInt8(ascii: "/")), isSourceFile(head) else { return nil }
        return head
    }

    /// The extensions of the files tests are written in: what a `file:line` or an id must name to be taken for a place
    /// (`localhost:5432: refused` names none).
    static let sourceExtensions: Set<String> = [
        "py", "swift", "js", "mjs", "cjs", "ts", "jsx", "tsx", "rb", "go", "java", "kt", "kts", "scala", "cs", "c",
        "cc",
        "cpp", "h", "m", "mm", "php", "rs", "ex", "exs", "dart", "feature",
    ]

    static func isSourceFile(_ path: String) -> Bool {
        // By bytes: every test's id comes here in each report of a run.
        let bytes = path.utf8
        guard !bytes.contains(UInt8(ascii: " ")), let dot = bytes.lastIndex(of: UInt8(ascii: ".")) else { return false }
        let suffix = bytes[bytes.index(after: dot)...]
        return !suffix.contains(UInt8(ascii: "/")) && sourceExtensions.contains(String(Substring(suffix)))
    }

    /// `file:line` leading a failure's text (`tests/test_cart.py:3: AssertionError`).
    package static func leadingPlace(_ text: String) -> (file: String, line: Int?)? {
        let first = text.prefix { $0 != "\n" }
        let parts = first.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, isSourceFile(String(parts[0])), let line = Int(parts[1]), line > 0,
            parts[2].hasPrefix(" ")
        else { return nil }
        return (String(parts[0]), line)
    }
}
