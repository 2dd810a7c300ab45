import Foundation
import OrchestrateModel
import Reports
import Testing

/// A runner's report read into one result per test (`suite.results`), and each result matched to the test it names.
@Suite("Results from any runner: Cucumber reports, matching, Xcode's shapes")
struct TestReportsTests {
    /// `files` written into a fresh folder, read as `format`.
    static func read(_ format: ResultsFormat, _ files: [String: String]) throws -> [RunnerTestResult] {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "orch-reports-\(UUID().uuidString.prefix(8))"
        ).path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for (name, text) in files { try Data(text.utf8).write(to: URL(fileURLWithPath: "\(folder)/\(name)")) }
        return try TestReports.read(format, folder: folder)
    }

    static let scenarios: [(id: String, location: String?)] = [
        ("cart-feature;adds-an-item", "features/cart.feature:3"),
        ("cart-feature;checks-out", "features/cart.feature:8"),
    ]

    @Test(
        "cucumber-js JSON (nanoseconds) and behave JSON (seconds, file:line locations): a scenario per test, matched by file:line"
    )
    func cucumberJSON() throws {
        let cucumberJS = """
            [{"uri": "features/cart.feature", "name": "Cart", "elements": [
              {"type": "scenario", "name": "Adds an item", "line": 3, "steps": [
                {"keyword": "Given ", "name": "a cart", "result": {"status": "passed", "duration": 1500000000}},
                {"keyword": "When ", "name": "I add it", "result": {"status": "passed", "duration": 500000000}}]},
              {"type": "scenario", "name": "Checks out", "line": 8, "steps": [
                {"keyword": "When ", "name": "I pay", "result": {"status": "failed", "duration": 1000000, "error_message": "card declined"}},
                {"keyword": "Then ", "name": "I see a receipt", "result": {"status": "skipped"}}]}]}]
            """
        let results = try Self.read(.cucumberJSON, ["cucumber.json": cucumberJS])
        let matched = TestReports.match(Self.scenarios, results)
        #expect(matched["cart-feature;adds-an-item"]?.status == .passed)
        #expect(matched["cart-feature;adds-an-item"]?.seconds == 2.0)
        #expect(matched["cart-feature;checks-out"]?.status == .failed)
        #expect(matched["cart-feature;checks-out"]?.message == "card declined")

        let behave = """
            [{"keyword": "Feature", "name": "Cart", "location": "features/cart.feature:1", "elements": [
              {"keyword": "Scenario", "name": "Adds an item", "location": "features/cart.feature:3", "steps": [
                {"keyword": "Given", "name": "a cart", "result": {"status": "passed", "duration": 0.25}}]},
              {"keyword": "Scenario", "name": "Checks out", "location": "features/cart.feature:8", "steps": [
                {"keyword": "When", "name": "I pay", "result": {"status": "undefined"}}]}]}]
            """
        let behaveResults = TestReports.match(Self.scenarios, try Self.read(.cucumberJSON, ["behave.json": behave]))
        #expect(behaveResults["cart-feature;adds-an-item"]?.seconds == 0.25)
        #expect(behaveResults["cart-feature;checks-out"]?.status == .failed, "an undefined step fails its scenario")
        #expect(throws: RunnerResultsError.self) {
            try Self.read(.cucumberJSON, ["broken.json": "{\"not\": \"features\"}"])
        }
    }

    @Test(
        "Cucumber JSON: a failure's message is the first failure that says one (a hook that failed silently hides none)"
    )
    func cucumberJSONMessage() throws {
        let report = """
            [{"uri": "features/cart.feature", "elements": [
              {"type": "scenario", "name": "Checks out", "line": 8,
               "before": [{"result": {"status": "failed", "duration": 1000}}],
               "steps": [{"keyword": "When ", "name": "I pay", "result": {"status": "failed", "error_message": "card declined"}}]}]}]
            """
        let results = try Self.read(.cucumberJSON, ["cucumber.json": report])
        #expect(results.map(\.status) == [.failed] && results.first?.message == "card declined", "\(results)")
    }

    @Test(
        "a Swift Testing stream of 1,500 tests, read in chunks side by side: each test's own result, in the stream's order, a known issue no failure"
    )
    func largeSwiftTestingStream() throws {
        // Every test declared first (as Swift Testing does), then their events interleaved as parallel tests end.
        let count = 1_500
        func id(_ index: Int) -> String { "M.S/t\(index)()/T.swift:\(index + 1):2" }
        var lines = (0..<count).map {
            #"{"kind":"test","version":0,"payload":{"kind":"function","id":"\#(id($0))","name":"t\#($0)()"}}"#
        }
        lines.append(#"{"kind":"test","version":0,"payload":{"kind":"suite","id":"M.S","name":"S"}}"#)
        for index in 0..<count {
            lines.append(
                #"{"kind":"event","version":0,"payload":{"kind":"testStarted","testID":"\#(id(index))","instant":{"absolute":\#(index)}}}"#
            )
            let known = index % 7 == 0 ? "true" : "false"
            if index % 5 == 0 || index % 7 == 0 {
                lines.append(
                    #"{"kind":"event","version":0,"payload":{"kind":"issueRecorded","testID":"\#(id(index))","instant":{"absolute":\#(index)},"issue":{"isKnown":\#(known),"sourceLocation":{"fileID":"M/T.swift","line":\#(index + 2)}},"messages":[{"text":"boom \#(index)"}]}}"#
                )
            }
            let end = index % 11 == 0 ? "testSkipped" : "testEnded"
            lines.append(
                #"{"kind":"event","version":0,"payload":{"kind":"\#(end)","testID":"\#(id(index))","instant":{"absolute":\#(Double(index) + 0.25)}}}"#
            )
        }
        // A suite's end is no test's result.
        lines.append(
            #"{"kind":"event","version":0,"payload":{"kind":"testEnded","testID":"M.S","instant":{"absolute":1}}}"#)
        let results = try Self.read(.swiftpm, ["events.jsonl": lines.joined(separator: "\n") + "\n"])
        #expect(results.count == count)
        #expect(results.map(\.name) == (0..<count).map { "t\($0)()" })
        for (index, result) in results.enumerated() {
            let status: RunnerTestResult.Status =
                index % 11 == 0 ? .skipped : index % 5 == 0 && index % 7 != 0 ? .failed : .passed
            #expect(result.status == status, "t\(index)")
            #expect(result.classname == "M.S")
            #expect(result.seconds == 0.25)
            if status == .failed {
                #expect(result.message == "boom \(index)")
                #expect(result.location == "M/T.swift:\(index + 2)")
            }
        }
    }

    @Test("Cucumber Messages: a test case the runner retried counts once, as its last run ended")
    func messages() throws {
        let envelopes = [
            #"{"gherkinDocument": {"uri": "features/cart.feature", "feature": {"children": [{"scenario": {"id": "s1", "location": {"line": 3, "column": 3}, "name": "Adds an item"}}]}}}"#,
            #"{"pickle": {"id": "p1", "uri": "features/cart.feature", "name": "Adds an item", "astNodeIds": ["s1"], "steps": []}}"#,
            #"{"testCase": {"id": "c1", "pickleId": "p1", "testSteps": []}}"#,
            #"{"testCaseStarted": {"id": "r1", "testCaseId": "c1", "attempt": 0, "timestamp": {"seconds": 10, "nanos": 0}}}"#,
            #"{"testStepFinished": {"testCaseStartedId": "r1", "testStepId": "t1", "testStepResult": {"status": "FAILED", "message": "flaky"}}}"#,
            #"{"testCaseFinished": {"testCaseStartedId": "r1", "willBeRetried": true, "timestamp": {"seconds": 11, "nanos": 0}}}"#,
            #"{"testCaseStarted": {"id": "r2", "testCaseId": "c1", "attempt": 1, "timestamp": {"seconds": 12, "nanos": 0}}}"#,
            #"{"testStepFinished": {"testCaseStartedId": "r2", "testStepId": "t1", "testStepResult": {"status": "PASSED"}}}"#,
            #"{"testCaseFinished": {"testCaseStartedId": "r2", "willBeRetried": false, "timestamp": {"seconds": 12, "nanos": 500000000}}}"#,
        ]
        let results = try Self.read(.cucumberMessages, ["run.ndjson": envelopes.joined(separator: "\n")])
        #expect(results.count == 1)
        let matched = TestReports.match(Self.scenarios, results)
        #expect(matched["cart-feature;adds-an-item"]?.status == .passed)
        #expect(matched["cart-feature;adds-an-item"]?.seconds == 0.5)

        // An outline's example row: the pickle names the outline, then the row, whose line is the scenario's.
        let outline = [
            #"{"gherkinDocument": {"uri": "features/cart.feature", "feature": {"children": [{"scenario": {"id": "o1", "location": {"line": 8, "column": 3}, "name": "Pays", "examples": [{"tableBody": [{"id": "row1", "location": {"line": 12, "column": 7}}]}]}}]}}}"#,
            #"{"pickle": {"id": "p2", "uri": "features/cart.feature", "name": "Pays", "astNodeIds": ["o1", "row1"], "steps": []}}"#,
            #"{"testCase": {"id": "c2", "pickleId": "p2", "testSteps": []}}"#,
            #"{"testCaseStarted": {"id": "r3", "testCaseId": "c2", "attempt": 0, "timestamp": {"seconds": 1, "nanos": 0}}}"#,
            #"{"testStepFinished": {"testCaseStartedId": "r3", "testStepId": "t2", "testStepResult": {"status": "UNKNOWN"}}}"#,
            #"{"testCaseFinished": {"testCaseStartedId": "r3", "willBeRetried": false, "timestamp": {"seconds": 2, "nanos": 0}}}"#,
        ]
        let row = TestReports.match(
            [("cart-feature;pays;row", "features/cart.feature:12")],
            try Self.read(.cucumberMessages, ["row.ndjson": outline.joined(separator: "\n")])
        )
        #expect(row["cart-feature;pays;row"] != nil, "matched by the row's line")
        #expect(row["cart-feature;pays;row"]?.status == .failed, "a step of unknown status is no pass")
    }

    @Test(
        "results go to the test they name: exactly, by a trailing part of its path, with or without (); two claimants get none"
    )
    func matching() {
        func result(_ classname: String, _ name: String) -> RunnerTestResult {
            JUnitResults.result(classname: classname, name: name, status: .passed)
        }
        let tests: [(id: String, location: String?)] = [
            ("tests/test_shop.py::TestCart::test_add", nil), ("ShopTests.CartTests/testAdd", nil),
            ("AppUITests/LoginTests/testLogin", nil),
            ("a/test_x.py::test_same", nil), ("b/test_x.py::test_same", nil),
        ]
        let matched = TestReports.match(
            tests,
            [
                result("tests.test_shop.TestCart", "test_add"), result("CartTests", "testAdd"),
                result("AppUITests/LoginTests", "testLogin()"),
                result("test_x", "test_same"),
            ])
        #expect(matched["tests/test_shop.py::TestCart::test_add"] != nil, "pytest's module and class")
        #expect(matched["ShopTests.CartTests/testAdd"] != nil, "XCTest's output names no module")
        #expect(matched["AppUITests/LoginTests/testLogin"] != nil, "Xcode's results add ()")
        #expect(
            matched["a/test_x.py::test_same"] == nil && matched["b/test_x.py::test_same"] == nil, "ambiguous: neither")
        // One test, one result named some other way: it is nobody's (a test has a result only when one names it).
        #expect(TestReports.match([("only", nil)], [result("Whatever", "it_is")])["only"] == nil)
    }

    @Test("Xcode's duration text in the machine's locale, and a listing's errors")
    func xcode() throws {
        #expect(XcodeResults.durationText("0,012s") == 0.012)
        #expect(XcodeResults.durationText("1.5s") == 1.5)
        #expect(XcodeResults.durationText("1m 1,25s") == 61.25)
        #expect(XcodeResults.durationText("15ms") == 0.015)
        #expect(XcodeResults.durationText("soon") == nil)
        let listing =
            #"{"values": [{"enabledTests": [{"identifier": "A/B/c"}], "disabledTests": [{"identifier": "A/B/d"}]}], "errors": []}"#
        #expect(try XcodeResults.enumeratedTests(Data(listing.utf8), file: "tests.json") == ["A/B/c"])
        let failing = #"{"values": [], "errors": [{"message": "Scheme App is not configured for testing"}]}"#
        #expect(throws: RunnerResultsError.self) {
            try XcodeResults.enumeratedTests(Data(failing.utf8), file: "tests.json")
        }
    }
}
