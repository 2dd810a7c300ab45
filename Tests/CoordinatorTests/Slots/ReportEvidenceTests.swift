import Coordinator
import Foundation
import OrchestrateModel
import OrchestrateTesting
import Testing

/// One rule for a test alone and a batch, for every results format: a reported failure fails; a reported pass stands
/// only when the process's end stands behind it; a test with no result of its own never passes.
@Suite("No pass without evidence: the same judgement from the same evidence, in every results format")
struct ReportEvidenceTests {
    enum Reported: Equatable {
        case passed, failed
        /// JUnit only.
        case skipped
        /// Started and never ended (a stream cut short).
        case started
    }

    /// A report of `format` saying how each of `tests` went, as files of an artifacts folder.
    static func report(_ format: ResultsFormat, _ tests: [(id: String, status: Reported)]) -> [String: String] {
        switch format {
        case .junit:
            let cases = tests.filter { $0.status != .started }.map { test in
                let (classname, name) = split(test.id, at: ".")
                return #"<testcase classname="\#(classname)" name="\#(name)" time="0.1">"#
                    + (test.status == .failed
                        ? #"<failure message="t.py:3: boom"/>"# : test.status == .skipped ? "<skipped/>" : "")
                    + "</testcase>"
            }
            return ["junit.xml": "<testsuites><testsuite name=\"s\">\(cases.joined())</testsuite></testsuites>"]
        case .cucumberJSON:
            let elements = tests.filter { $0.status != .started }.map { test in
                let (_, name) = split(test.id, at: ".")
                return
                    #"{"type": "scenario", "name": "\#(name)", "steps": [{"keyword": "Given ", "name": "x", "result": {"status": "\#(test.status == .failed ? "failed" : "passed")", "duration": 1000}}]}"#
            }
            return ["cucumber.json": #"[{"uri": "suite", "elements": [\#(elements.joined(separator: ","))]}]"#]
        case .cucumberMessages:
            var lines: [String] = []
            for (index, test) in tests.enumerated() {
                let (_, name) = split(test.id, at: ".")
                lines += [
                    #"{"pickle": {"id": "p\#(index)", "uri": "suite", "name": "\#(name)", "steps": []}}"#,
                    #"{"testCase": {"id": "c\#(index)", "pickleId": "p\#(index)", "testSteps": []}}"#,
                    #"{"testCaseStarted": {"id": "r\#(index)", "testCaseId": "c\#(index)", "attempt": 0, "timestamp": {"seconds": 1, "nanos": 0}}}"#,
                ]
                guard test.status != .started else { continue }
                lines += [
                    #"{"testStepFinished": {"testCaseStartedId": "r\#(index)", "testStepId": "s", "testStepResult": {"status": "\#(test.status == .failed ? "FAILED" : "PASSED")"}}}"#,
                    #"{"testCaseFinished": {"testCaseStartedId": "r\#(index)", "timestamp": {"seconds": 2, "nanos": 0}, "willBeRetried": false}}"#,
                ]
            }
            return ["messages.ndjson": lines.joined(separator: "\n") + "\n"]
        case .swiftpm:
            // Swift Testing's event stream, version 0.
            var lines: [String] = []
            for test in tests {
                let id = "\(test.id)/Tests.swift:3:2"
                lines.append(
                    #"{"kind": "test", "version": 0, "payload": {"kind": "function", "id": "\#(id)", "name": "x"}}"#)
                lines.append(
                    #"{"kind": "event", "version": 0, "payload": {"kind": "testStarted", "testID": "\#(id)", "instant": {"absolute": 1}}}"#
                )
                if test.status == .failed {
                    lines.append(
                        #"{"kind": "event", "version": 0, "payload": {"kind": "issueRecorded", "testID": "\#(id)", "instant": {"absolute": 1.5}, "issue": {"isKnown": false, "sourceLocation": {"fileID": "T/Tests.swift", "line": 4}}, "messages": [{"text": "boom"}]}}"#
                    )
                }
                if test.status != .started {
                    lines.append(
                        #"{"kind": "event", "version": 0, "payload": {"kind": "testEnded", "testID": "\#(id)", "instant": {"absolute": 2}}}"#
                    )
                }
            }
            // A stream cut short also ends in the middle of a line.
            return [
                "events.jsonl": lines.joined(separator: "\n")
                    + (tests.contains { $0.status == .started } ? "\n{\"kind\": \"ev" : "\n")
            ]
        case .xcresult:
            let nodes = tests.filter { $0.status != .started }.map { test in
                let (classname, name) = split(test.id, at: "/")
                return
                    #"{"nodeType": "Test Case", "name": "\#(name)", "nodeIdentifierURL": "test://com.apple.xcode/P/\#(classname)/\#(name)", "result": "\#(test.status == .failed ? "Failed" : "Passed")", "durationInSeconds": 0.1}"#
            }
            return ["tests.xcresult.json": #"{"testNodes": [\#(nodes.joined(separator: ","))]}"#]
        }
    }

    /// Three test ids in the shape `format`'s runner names tests.
    static func ids(_ format: ResultsFormat) -> [String] {
        switch format {
        case .junit, .cucumberJSON, .cucumberMessages: ["suite.t1", "suite.t2", "suite.t3"]
        case .swiftpm: ["Shop.Suite/t1()", "Shop.Suite/t2()", "Shop.Suite/t3()"]
        case .xcresult: ["App/Suite/t1()", "App/Suite/t2()", "App/Suite/t3()"]
        }
    }

    static func split(_ id: String, at separator: Character) -> (String, String) {
        let index = id.lastIndex(of: separator)!
        return (String(id[..<index]), String(id[id.index(after: index)...]))
    }

    /// What `dispositions` makes of `reported` for `ids` (alone when one) after a process that ended as `process`, each
    /// as `passed`, `failed` or `alone`, with the first failed one's error.
    static func judge(
        _ format: ResultsFormat, _ ids: [String], _ reported: [(id: String, status: Reported)], process: AttemptResult
    ) throws -> (verdicts: [String], error: String?) {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let folder = directory.path
        for (name, text) in report(format, reported) { try directory.write(name, text) }
        let attempts = ids.enumerated().map { index, id in
            ClaimedAttempt(
                id: Int64(index), runID: UUID(),
                scenario: Scenario(id: id, name: id, command: "x", timeoutMilliseconds: 1000, results: format),
                attempt: 1, maxAttempts: 1, leaseToken: UUID(), expectedMilliseconds: nil,
                worker: WorkerIdentity(host: "h", pid: 1, slot: 1),
                port: 1)
        }
        var error: String?
        let verdicts = AttemptRunner.dispositions(of: attempts, process: process, format: format, folder: folder).map {
            disposition in
            switch disposition {
            case .alone: return "alone"
            case .finished(let result, _):
                if result.outcome != .passed, error == nil { error = result.error }
                return result.outcome == .passed ? "passed" : "failed"
            }
        }
        return (verdicts, error)
    }

    static let exited0 = AttemptResult(outcome: .passed, exitCode: 0, durationMilliseconds: 100)
    static let exited1 = AttemptResult(outcome: .failed, exitCode: 1, durationMilliseconds: 100)
    static let exited137 = AttemptResult(outcome: .failed, exitCode: 137, durationMilliseconds: 100)
    static let killed = AttemptResult(outcome: .crashed, signal: 9, durationMilliseconds: 100)

    @Test("reported passes with a clean exit pass; failures fail", arguments: ResultsFormat.allCases)
    func clean(format: ResultsFormat) throws {
        let ids = Self.ids(format)
        let batch = try Self.judge(
            format, ids, [(ids[0], .failed), (ids[1], .passed), (ids[2], .passed)], process: Self.exited0)
        #expect(batch.verdicts == ["failed", "passed", "passed"])
        // A runner's status for failed tests, with the failure reported: the passes stand.
        let failing = try Self.judge(
            format, ids, [(ids[0], .failed), (ids[1], .passed), (ids[2], .passed)], process: Self.exited1)
        #expect(failing.verdicts == ["failed", "passed", "passed"])
        #expect(try Self.judge(format, [ids[1]], [(ids[1], .passed)], process: Self.exited0).verdicts == ["passed"])
    }

    @Test(
        "a report that names none of the tests asked for: none passes (a batch's run again alone)",
        arguments: ResultsFormat.allCases)
    func elsewhere(format: ResultsFormat) throws {
        let ids = Self.ids(format)
        let other = format == .xcresult ? "Else/Where/zzz()" : format == .swiftpm ? "Else.Where/zzz()" : "elsewhere.zzz"
        #expect(
            try Self.judge(format, ids, [(other, .passed)], process: Self.exited0).verdicts == [
                "alone", "alone", "alone",
            ])
        let alone = try Self.judge(format, [ids[0]], [(other, .passed)], process: Self.exited0)
        #expect(alone.verdicts == ["failed"])
        #expect(alone.error?.contains("its runner reported no result for \(ids[0])") == true, "\(alone.error ?? "")")
        // An empty report (a filter that matched nothing) is no evidence either.
        #expect(try Self.judge(format, [ids[0]], [], process: Self.exited0).verdicts == ["failed"])
    }

    @Test(
        "passes reported by a process that did not end well: a batch's run again alone, and alone they fail",
        arguments: ResultsFormat.allCases)
    func notEndedWell(format: ResultsFormat) throws {
        let ids = Self.ids(format)
        let allPassed = ids.map { ($0, Reported.passed) }
        for process in [Self.exited1, Self.exited137, Self.killed] {
            #expect(
                try Self.judge(format, ids, allPassed, process: process).verdicts == ["alone", "alone", "alone"],
                "\(process)")
            let alone = try Self.judge(format, [ids[0]], [(ids[0], .passed)], process: process)
            #expect(alone.verdicts == ["failed"], "\(process)")
            #expect(
                alone.error?.contains("its report says it passed, but its process did not end well") == true,
                "\(alone.error ?? "")")
        }
        // A crash after a failure was reported: the failure stands, the passes are not proven.
        let crashed = try Self.judge(
            format, ids, [(ids[0], .failed), (ids[1], .passed), (ids[2], .passed)], process: Self.killed)
        #expect(crashed.verdicts == ["failed", "alone", "alone"])
    }

    @Test(
        "a skip stands only on a clean exit (a runner stopped early skips what it did not run); failed in one run of two is failed"
    )
    func skipsAndRepeats() throws {
        let ids = Self.ids(.junit)
        // Exit 1 explained by t1's failure: t2's pass stands, t3's skip does not.
        let batch = try Self.judge(
            .junit, ids, [(ids[0], .failed), (ids[1], .passed), (ids[2], .skipped)], process: Self.exited1)
        #expect(batch.verdicts == ["failed", "passed", "alone"])
        let alone = try Self.judge(.junit, [ids[2]], [(ids[2], .skipped)], process: Self.exited1)
        #expect(
            alone.verdicts == ["failed"] && alone.error?.contains("its report says it was skipped") == true, "\(alone)")
        #expect(try Self.judge(.junit, [ids[2]], [(ids[2], .skipped)], process: Self.exited0).verdicts == ["passed"])
        // The same test failed in one configuration and passed in another.
        #expect(
            try Self.judge(.junit, [ids[0]], [(ids[0], .failed), (ids[0], .passed)], process: Self.exited1).verdicts
                == ["failed"])
    }

    @Test(
        "a stream cut short: the test it started and never ended has no result",
        arguments: [ResultsFormat.swiftpm, .cucumberMessages])
    func cutShort(format: ResultsFormat) throws {
        let ids = Self.ids(format)
        let judged = try Self.judge(format, ids, [(ids[0], .passed), (ids[1], .started)], process: Self.exited0)
        #expect(judged.verdicts == ["passed", "alone", "alone"])
        #expect(try Self.judge(format, [ids[1]], [(ids[1], .started)], process: Self.exited0).verdicts == ["failed"])
    }

    @Test("report files that are not the folder's own are not read: a link, a hard link of a file elsewhere, a FIFO")
    func notOwnFiles() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        do {
            let folder = directory.path
            let elsewhere = "\(folder)/elsewhere.xml"
            let passed = Self.report(.junit, [("suite.t1", .passed)])["junit.xml"]!
            try Data(passed.utf8).write(to: URL(fileURLWithPath: elsewhere))
            let artifacts = "\(folder)/artifacts"
            for plant in [
                { symlink(elsewhere, "\(artifacts)/junit.xml") }, { link(elsewhere, "\(artifacts)/junit.xml") },
                { mkfifo("\(artifacts)/junit.xml", 0o600) },
            ] {
                try? FileManager.default.removeItem(atPath: artifacts)
                try FileManager.default.createDirectory(atPath: artifacts, withIntermediateDirectories: true)
                #expect(plant() == 0)
                let attempt = ClaimedAttempt(
                    id: 1, runID: UUID(),
                    scenario: Scenario(
                        id: "suite.t1", name: "t1", command: "x", timeoutMilliseconds: 1000, results: .junit),
                    attempt: 1, maxAttempts: 1, leaseToken: UUID(), expectedMilliseconds: nil,
                    worker: WorkerIdentity(host: "h", pid: 1, slot: 1),
                    port: 1)
                guard
                    case .finished(let result, _) = AttemptRunner.dispositions(
                        of: [attempt], process: Self.exited0, format: .junit, folder: artifacts)[0]
                else {
                    Issue.record("a test alone is finished")
                    continue
                }
                #expect(result.outcome == .failed)
                #expect(
                    result.error?.contains("junit.xml") == true && result.error?.contains("not read") == true,
                    "\(result.error ?? "")")
            }
        }
    }
}
