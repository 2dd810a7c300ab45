import Foundation
import OrchestrateModel
import Reports
import Testing

@Suite("The HTML report's timeline")
struct TimelineTests {
    /// `scenarios` scenarios over `hosts` hosts of 4 slots, a second apart; every 10th failed once and passed on retry.
    static func report(scenarios: Int, hosts: Int) -> RunReport {
        let runID = UUID()
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        var id: Int64 = 0
        func attempt(_ scenario: Int, _ number: Int, _ outcome: Outcome, at offset: Double) -> AttemptRecord {
            id += 1
            let slot = scenario % (hosts * 4)
            return AttemptRecord(
                id: id, runID: runID, scenarioID: "s\(scenario)", attempt: number, state: .finished, outcome: outcome,
                exitCode: 0, signal: nil,
                worker: "ci-\(slot / 4)/100/\(slot % 4 + 1)", startedAt: start.addingTimeInterval(offset),
                finishedAt: start.addingTimeInterval(offset + 0.8), durationMilliseconds: 800, stdout: "", stderr: "",
                error: nil)
        }
        let entries = (0..<scenarios).map { index -> RunReport.ScenarioEntry in
            let offset = Double(index / (hosts * 4))
            let attempts =
                index % 10 == 0
                ? [attempt(index, 1, .failed, at: offset), attempt(index, 2, .passed, at: offset + 1)]
                : [attempt(index, 1, .passed, at: offset)]
            var entry = RunReport.ScenarioEntry(
                scenario: Scenario(
                    id: "s\(index)", name: "scenario \(index)", command: "true", timeoutMilliseconds: 1000),
                result: index % 10 == 0 ? .flaky : .passed, attempts: attempts)
            entry.expectedMilliseconds = index % 3 == 0 ? nil : 500
            return entry
        }
        return RunReport(
            runID: runID, state: .finished, startedAt: start,
            finishedAt: start.addingTimeInterval(Double(scenarios / (hosts * 4)) + 2),
            host: "ci-0", gitRevision: nil, scenarios: entries)
    }

    @Test("a trend is the attempts before the run, then the run's own in the order they finished, the last 20 of them")
    func trendAddsTheRun() {
        let report = Self.report(scenarios: 11, hosts: 1)
        let before = (0..<19).map { TrendPoint(passed: true, milliseconds: Int64($0)) }
        let trends = TrendPoint.trends(earlier: ["s0": before, "s1": [before[0]], "gone": before], adding: report)
        // s0 failed once and passed on its retry: both come after the earlier 19, the oldest of which drops out.
        #expect(trends["s0"]?.count == 20)
        #expect(
            trends["s0"]?.suffix(2) == [
                TrendPoint(passed: false, milliseconds: 800), TrendPoint(passed: true, milliseconds: 800),
            ])
        #expect(trends["s0"]?.first == before[1])
        #expect(trends["s1"] == [before[0], TrendPoint(passed: true, milliseconds: 800)])
        #expect(trends["s2"] == [TrendPoint(passed: true, milliseconds: 800)], "no history: the run's own attempt")
        #expect(trends["gone"] == before, "a scenario the run did not have keeps what was read")
    }

    @Test(
        "a bar per attempt in a lane per slot grouped by host, a line per retry, an idle tail; a trend and the time against expected"
    )
    func pictures() {
        let report = Self.report(scenarios: 30, hosts: 2)
        let trends = [
            "s1": [TrendPoint(passed: true, milliseconds: 700), TrendPoint(passed: false, milliseconds: 1200)]
        ]
        let html = HTMLReport.render(report, logs: [:], trends: trends)
        let attempts = report.scenarios.flatMap(\.attempts).count
        #expect(html.components(separatedBy: "<rect class=\"bar ").count - 1 == attempts)
        #expect(html.components(separatedBy: "<line class=\"retry\"").count - 1 == 3)
        #expect(html.contains("<text class=\"host\" x=\"0\" y=\"11.0\">ci-0</text>") && html.contains(">ci-1</text>"))
        #expect(html.components(separatedBy: "<text class=\"lane\"").count - 1 == 8, "4 slots on each of 2 hosts")
        #expect(html.contains("<rect class=\"idle\""))
        #expect(html.contains("<title>last 2 attempts: 1 passed</title>"))
        #expect(html.contains("×1.60"), "800 ms against 500 expected")
        #expect(!html.contains("<script"))
    }

    @Test("2,000 scenarios make a page under 5 MB")
    func weight() {
        let report = Self.report(scenarios: 2000, hosts: 4)
        let trends = Dictionary(
            uniqueKeysWithValues: report.scenarios.map {
                ($0.scenario.id, Array(repeating: TrendPoint(passed: true, milliseconds: 800), count: 20))
            })
        let bytes = HTMLReport.render(report, logs: [:], trends: trends).utf8.count
        #expect(bytes < 5_000_000, "\(bytes) bytes")
        print("2,000 scenarios, 2,200 attempts, 20-point trends: \(bytes) bytes")
    }
}
