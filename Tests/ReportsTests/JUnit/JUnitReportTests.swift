import Foundation
import OrchestrateModel
import Reports
import Testing

#if canImport(FoundationXML)
import FoundationXML
#endif

@Suite("JUnit XML")
struct JUnitReportTests {
    let runID = UUID()

    func attempt(
        _ scenario: String, _ number: Int, _ outcome: Outcome, stdout: String = "", exitCode: Int? = nil
    ) -> AttemptRecord {
        AttemptRecord(
            id: Int64(number), runID: runID, scenarioID: scenario, attempt: number, state: .finished, outcome: outcome,
            exitCode: exitCode,
            signal: nil, worker: "host/1/1", startedAt: Date(), finishedAt: Date(), durationMilliseconds: 1200,
            stdout: stdout, stderr: "", error: nil)
    }

    func report() -> RunReport {
        func scenario(_ id: String) -> Scenario {
            Scenario(id: id, name: "\(id) <&> name", command: "true", timeoutMilliseconds: 1000)
        }
        return RunReport(
            runID: runID, state: .finished, startedAt: Date(), finishedAt: Date(), host: "ci", gitRevision: "abc",
            scenarios: [
                .init(
                    scenario: scenario("ok"), result: .passed,
                    attempts: [attempt("ok", 1, .passed, stdout: "color \u{1B}[31mred\u{1B}[0m & <tag>\0")]
                ),
                .init(
                    scenario: scenario("flaky"), result: .flaky,
                    attempts: [attempt("flaky", 1, .failed, exitCode: 1), attempt("flaky", 2, .passed)]),
                .init(
                    scenario: scenario("broken"), result: .failed,
                    attempts: [attempt("broken", 1, .failed, exitCode: 2), attempt("broken", 2, .timedOut)]),
                .init(scenario: scenario("left"), result: .pending, attempts: []),
            ])
    }

    @Test("the XML parses and carries one testcase per scenario with its verdict")
    func structure() throws {
        let xml = JUnitReport.render(report())
        let document = try XMLDocument(xmlString: xml)
        let suite = try #require(try document.nodes(forXPath: "/testsuites/testsuite").first as? XMLElement)
        #expect(suite.attribute(forName: "tests")?.stringValue == "4")
        #expect(suite.attribute(forName: "failures")?.stringValue == "1")
        #expect(suite.attribute(forName: "skipped")?.stringValue == "1")
        let cases = try document.nodes(forXPath: "//testcase")
        #expect(cases.count == 4)
        #expect(
            try document.nodes(forXPath: "//testcase[@name='broken <&> name']/failure[@type='timed-out']").count == 1)
        #expect(try document.nodes(forXPath: "//testcase[@name='broken <&> name']/rerunFailure").count == 1)
        #expect(try document.nodes(forXPath: "//testcase[@name='flaky <&> name']/flakyFailure").count == 1)
        #expect(
            try document.nodes(forXPath: "//testcase[@name='flaky <&> name']//property[@name='flaky'][@value='true']")
                .count == 1)
        #expect(try document.nodes(forXPath: "//testcase[@name='left <&> name']/skipped").count == 1)
        let output = try #require(
            try document.nodes(forXPath: "//testcase[@name='ok <&> name']/system-out").first?.stringValue)
        #expect(output.contains("color \\u{1B}[31mred"))
        #expect(output.contains("& <tag>"))
    }

    @Test(
        "a runner's test keeps the runner's class and test names: pytest's module and class, SwiftPM's suite and function",
        arguments: [
            ("tests/test_shop.py::TestCart::test_add[1-2]", "tests.test_shop.TestCart", "test_add[1-2]"),
            ("test_pay.py::test_pay", "test_pay", "test_pay"),
            ("Module.Suite/sum(of:and:)", "Module.Suite", "sum(of:and:)"),
            ("Module.free(a:)", "Module", "free(a:)"),
            ("checkout", "orchestrate", "checkout"),
        ])
    func runnerNames(id: String, className: String, name: String) throws {
        var scenario = Scenario(id: id, name: id, command: "pytest {ids}", timeoutMilliseconds: 1000)
        scenario.batch = Batch(command: "pytest {ids}", size: 10, milliseconds: 60_000)
        let report = RunReport(
            runID: runID, state: .finished, startedAt: Date(), finishedAt: Date(), host: "ci", gitRevision: nil,
            scenarios: [.init(scenario: scenario, result: .passed, attempts: [attempt(id, 1, .passed)])])
        let document = try XMLDocument(xmlString: JUnitReport.render(report))
        let testcase = try #require(try document.nodes(forXPath: "//testcase").first as? XMLElement)
        #expect(testcase.attribute(forName: "classname")?.stringValue == className)
        #expect(testcase.attribute(forName: "name")?.stringValue == name)
    }
}
