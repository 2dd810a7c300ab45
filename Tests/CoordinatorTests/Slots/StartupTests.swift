import Coordinator
import Foundation
import OrchestrateModel
import OrchestrateTesting
import Testing

/// What a batch's process spent outside its tests (its runner's start-up), which `suite.batch: auto` sizes batches
/// from: measured from the runner's own report, on the process's first attempt only.
@Suite("A runner's start-up, from its report")
struct StartupTests {
    static func startups(
        _ files: [String: String], format: ResultsFormat, ids: [String], wallMilliseconds: Int64
    ) throws -> [Int64?] {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        for (name, text) in files { try directory.write(name, text) }
        let attempts = ids.enumerated().map { index, id in
            ClaimedAttempt(
                id: Int64(index), runID: UUID(),
                scenario: Scenario(id: id, name: id, command: "x", timeoutMilliseconds: 1000, results: format),
                attempt: 1, maxAttempts: 1, leaseToken: UUID(), expectedMilliseconds: nil,
                worker: WorkerIdentity(host: "h", pid: 1, slot: 1), port: 1)
        }
        let process = AttemptResult(outcome: .passed, exitCode: 0, durationMilliseconds: wallMilliseconds)
        return AttemptRunner.dispositions(of: attempts, process: process, format: format, folder: directory.path).map {
            guard case .finished(let result, _) = $0 else { return nil }
            return result.startupMilliseconds
        }
    }

    static func junit(_ times: [String?]) -> [String: String] {
        let cases = times.enumerated().map { index, time in
            #"<testcase classname="t" name="test_\#(index)"\#(time.map { #" time="\#($0)""# } ?? "")/>"#
        }
        return ["junit.xml": "<testsuites><testsuite name=\"s\">\(cases.joined())</testsuite></testsuites>"]
    }

    @Test("tests run one after another: the process's wall time less the sum of their times, on its first attempt")
    func serial() throws {
        let ids = ["t.test_0", "t.test_1", "t.test_2"]
        let startups = try Self.startups(
            Self.junit(["0.1", "0.2", "0.1"]), format: .junit, ids: ids, wallMilliseconds: 1_000)
        #expect(startups == [600, nil, nil])
    }

    @Test(
        "tests run in parallel inside the process (Swift Testing): less the span from the first start to the last end")
    func parallel() throws {
        var lines: [String] = []
        for (index, (start, end)) in [(10.0, 10.5), (10.1, 10.6), (10.2, 10.6)].enumerated() {
            let id = "M.S/f\(index)()/T.swift:\(index + 1):2"
            lines += [
                #"{"kind": "test", "version": 0, "payload": {"kind": "function", "id": "\#(id)", "name": "f"}}"#,
                #"{"kind": "event", "version": 0, "payload": {"kind": "testStarted", "testID": "\#(id)", "instant": {"absolute": \#(start)}}}"#,
                #"{"kind": "event", "version": 0, "payload": {"kind": "testEnded", "testID": "\#(id)", "instant": {"absolute": \#(end)}}}"#,
            ]
        }
        // 1.4 s of test time in a process of 1 s: the sum would say nothing; the span, 0.6 s, leaves 0.4 s.
        let startups = try Self.startups(
            ["events.jsonl": lines.joined(separator: "\n") + "\n"], format: .swiftpm,
            ids: ["M.S/f0()", "M.S/f1()", "M.S/f2()"], wallMilliseconds: 1_000)
        #expect(startups == [400, nil, nil])
    }

    @Test("a test without a time, a test not reported, or tests longer than their process: nothing is learned")
    func unknown() throws {
        let ids = ["t.test_0", "t.test_1"]
        #expect(
            try Self.startups(Self.junit(["0.1", nil]), format: .junit, ids: ids, wallMilliseconds: 1_000) == [
                nil, nil,
            ])
        #expect(
            try Self.startups(
                Self.junit(["0.1", "0.1"]), format: .junit, ids: ids + ["t.test_9"], wallMilliseconds: 1_000
            )
            .compactMap { $0 }.isEmpty)
        #expect(
            try Self.startups(Self.junit(["0.6", "0.6"]), format: .junit, ids: ids, wallMilliseconds: 1_000)
                == [nil, nil])
    }

    @Test("a report's times that are no times (nan, inf, 1e300, negative) neither end the process nor teach anything")
    func hostileTimes() throws {
        let ids = ["t.test_0", "t.test_1"]
        for time in ["nan", "inf", "1e300", "-5", "-inf"] {
            let startups = try Self.startups(
                Self.junit([time, "0.1"]), format: .junit, ids: ids, wallMilliseconds: 1_000)
            #expect(startups == [nil, nil], "\(time)")
        }
    }

    @Test(
        "a batch's time limit: its tests' limits together, or its longest and three times what all are expected to take"
    )
    func timeLimit() {
        func attempt(_ id: String, timeout: Int64, expected: Int64?) -> ClaimedAttempt {
            ClaimedAttempt(
                id: 1, runID: UUID(), scenario: Scenario(id: id, name: id, command: "x", timeoutMilliseconds: timeout),
                attempt: 1, maxAttempts: 1, leaseToken: UUID(), expectedMilliseconds: expected,
                worker: WorkerIdentity(host: "h", pid: 1, slot: 1), port: 1)
        }
        // 400 quick tests of 5 minutes each: 33 hours summed; 5 minutes and 2.4 s when all were seen.
        let seen = (0..<400).map { attempt("t\($0)", timeout: 300_000, expected: 2) }
        #expect(AttemptRunner.timeLimit(of: seen) == 300_000 + 2_400)
        // One never seen: nothing to go by but the sum.
        #expect(AttemptRunner.timeLimit(of: seen + [attempt("new", timeout: 300_000, expected: nil)]) == 401 * 300_000)
        #expect(AttemptRunner.timeLimit(of: [attempt("alone", timeout: 1_000, expected: 50_000)]) == 1_000)
        let slow = [attempt("a", timeout: 1_000, expected: 900), attempt("b", timeout: 1_000, expected: 900)]
        #expect(AttemptRunner.timeLimit(of: slow) == 2_000)
    }
}
