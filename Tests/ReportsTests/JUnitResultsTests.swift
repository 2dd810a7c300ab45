import Foundation
import OrchestrateTesting
import Reports
import Testing

/// JUnit XML as runners write it, read into one result per test: the real pytest's (run at test time on the suite in
/// Fixtures/pytest-suite), and the published shapes of jest-junit, Gradle, xcpretty and SwiftPM's `--xunit-output`.
@Suite("Results from any runner: JUnit XML")
struct JUnitResultsTests {
    static let pytestSuite = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "Fixtures/pytest-suite"
    ).path

    static func results(_ xml: String, file: String = "report.xml") throws -> [String: RunnerTestResult] {
        Dictionary(uniqueKeysWithValues: try JUnitResults.parse(Data(xml.utf8), file: file).map { ($0.id, $0) })
    }

    @Test(
        "pytest's own report (xunit2): passes, a failure with its file:line, an error in a fixture, a skip, an xfail, classes, parameters"
    )
    func pytest() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "orch-pytest-\(UUID().uuidString.prefix(8))"
        ).path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let status = try await Python.status(
            [
                "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", Self.pytestSuite, "-o",
                "junit_family=xunit2",
                "--junitxml=\(folder)/report.xml", Self.pytestSuite,
            ], environment: ["PYTHONDONTWRITEBYTECODE": "1"])
        // 1: some tests failed (the suite's point); anything else is pytest missing or broken (make test installs it).
        try #require(status == 1, "python3 -m pytest exited with \(status)")

        let results = try JUnitResults.parse(
            try Data(contentsOf: URL(fileURLWithPath: "\(folder)/report.xml")), file: "report.xml")
        #expect(
            results.map(\.id) == [
                "test_shop/test_passes", "test_shop/test_fails", "test_shop/test_errors_in_setup",
                "test_shop/test_skipped",
                "test_shop/test_expected_failure", "test_shop.TestCheckout/test_in_class",
                "test_shop/test_parametrized[1]",
                "test_shop/test_parametrized[2]",
            ])
        let byID = Dictionary(uniqueKeysWithValues: results.map { ($0.id, $0) })
        #expect(byID["test_shop/test_passes"]?.status == .passed && byID["test_shop/test_passes"]?.seconds != nil)
        let failed = try #require(byID["test_shop/test_fails"])
        #expect(failed.status == .failed && !failed.isError)
        #expect(failed.message == "AssertionError: the cart total is wrong\nassert 2 == 3")
        #expect(failed.location?.hasSuffix("pytest-suite/test_shop.py:12") == true, "\(failed.location ?? "none")")
        let broken = try #require(byID["test_shop/test_errors_in_setup"])
        #expect(
            broken.status == .failed && broken.isError
                && broken.message?.contains("the fixture cannot reach the database") == true)
        #expect(broken.location?.hasSuffix("test_shop.py:17") == true)
        #expect(
            byID["test_shop/test_skipped"]?.status == .skipped
                && byID["test_shop/test_skipped"]?.message == "needs a printer")
        #expect(
            byID["test_shop/test_expected_failure"]?.status == .skipped
                && byID["test_shop/test_expected_failure"]?.message == "known bug 42")
        #expect(results.filter { $0.status == .passed }.count == 4)
    }

    @Test("jest-junit: a suite per file, the failure's stack names the file")
    func jest() throws {
        let results = try Self.results(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <testsuites name="jest tests" tests="2" failures="1" errors="0" time="1.234">
              <testsuite name="cart" errors="0" failures="1" skipped="0" timestamp="2026-11-24T10:00:00" time="0.5" tests="2">
                <testcase classname="cart adds an item" name="cart adds an item" time="0.003">
                </testcase>
                <testcase classname="cart totals" name="cart totals" time="0.01">
                  <failure>Error: expect(received).toBe(expected)

            Expected: 3
            Received: 2
                at Object.&lt;anonymous&gt; (/app/src/cart.test.js:12:19)</failure>
                </testcase>
              </testsuite>
            </testsuites>
            """)
        #expect(results["cart adds an item/cart adds an item"]?.status == .passed)
        let failed = try #require(results["cart totals/cart totals"])
        #expect(failed.status == .failed && failed.seconds == 0.01 && failed.location == "/app/src/cart.test.js:12")
        #expect(failed.message?.hasPrefix("Error: expect(received).toBe(expected)") == true)
    }

    @Test("Gradle: one <testsuite> root per class, <skipped/>, the failure's type and stack")
    func gradle() throws {
        let results = try Self.results(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <testsuite name="com.shop.CartTest" tests="3" skipped="1" failures="1" errors="0" timestamp="2026-11-24T10:00:00" hostname="ci" time="0.05">
              <properties/>
              <testcase name="addsItem()" classname="com.shop.CartTest" time="0.01"/>
              <testcase name="totals()" classname="com.shop.CartTest" time="0.02">
                <failure message="org.opentest4j.AssertionFailedError: expected: &lt;3&gt; but was: &lt;2&gt;" type="org.opentest4j.AssertionFailedError">org.opentest4j.AssertionFailedError: expected: &lt;3&gt; but was: &lt;2&gt;
                at com.shop.CartTest.totals(CartTest.kt:21)</failure>
              </testcase>
              <testcase name="printsReceipt()" classname="com.shop.CartTest" time="0.0">
                <skipped/>
              </testcase>
              <system-out><![CDATA[checkout log: total 2 (not 3.py:7)]]></system-out>
              <system-err><![CDATA[]]></system-err>
            </testsuite>
            """)
        #expect(results.count == 3 && results["com.shop.CartTest/addsItem()"]?.status == .passed)
        let failed = try #require(results["com.shop.CartTest/totals()"])
        #expect(
            failed.message == "org.opentest4j.AssertionFailedError: expected: <3> but was: <2>"
                && failed.location == "CartTest.kt:21")
        #expect(
            results["com.shop.CartTest/printsReceipt()"]?.status == .skipped
                && results["com.shop.CartTest/printsReceipt()"]?.message == nil)
    }

    @Test("xcpretty and xcbeautify: no time on failures, the location as the failure's text; locale decimal commas")
    func xcpretty() throws {
        let results = try Self.results(
            """
            <?xml version='1.0' encoding='UTF-8'?>
            <testsuites name='ShopTests.xctest' tests='3' failures='1'>
              <testsuite name='ShopTests.CartTests' tests='3' failures='1'>
                <testcase classname='ShopTests.CartTests' name='testAddsItem' time='0.004'/>
                <testcase classname='ShopTests.CartTests' name='testEmpty' time='0,012'/>
                <testcase classname='ShopTests.CartTests' name='testTotals'>
                  <failure message='XCTAssertEqual failed: (&quot;2&quot;) is not equal to (&quot;3&quot;)'>/Users/ci/Shop/Tests/CartTests.swift:18</failure>
                </testcase>
              </testsuite>
            </testsuites>
            """)
        #expect(results["ShopTests.CartTests/testEmpty"]?.seconds == 0.012)
        let failed = try #require(results["ShopTests.CartTests/testTotals"])
        #expect(failed.seconds == nil && failed.status == .failed)
        #expect(
            failed.message == #"XCTAssertEqual failed: ("2") is not equal to ("3")"#
                && failed.location == "/Users/ci/Shop/Tests/CartTests.swift:18")
    }

    @Test("SwiftPM's --xunit-output: Module.Class and the test's name as `swift test list` names it")
    func swiftPM() throws {
        let results = try Self.results(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <testsuites>
            <testsuite name="TestResults" errors="0" tests="2" failures="1" time="0.02">
            <testcase classname="ShopTests.CartTests" name="testAddsItem" time="0.001">
            </testcase>
            <testcase classname="ShopTests.CartTests" name="testTotals" time="0.002">
            <failure message="XCTAssertEqual failed: (&quot;2&quot;) is not equal to (&quot;3&quot;) (Tests/ShopTests/CartTests.swift:18)"></failure>
            </testcase>
            </testsuite>
            </testsuites>
            """)
        #expect(results.keys.sorted() == ["ShopTests.CartTests/testAddsItem", "ShopTests.CartTests/testTotals"])
        #expect(results["ShopTests.CartTests/testTotals"]?.location == "Tests/ShopTests/CartTests.swift:18")
    }

    @Test(
        "what is not a JUnit report is one error naming the file and line",
        arguments: [
            ("<testsuites><testsuite><testcase name='a'>", "report.xml:1: not a JUnit XML report"),
            (
                "<html><body>502 Bad Gateway</body></html>",
                "report.xml:1: not a JUnit XML report: the root element is <html>"
            ),
            ("", "report.xml:1: not a JUnit XML report"),
            ("\n\n<testsuites>\n<testcase name='a' time='1'>\n</testsuites>", "report.xml:5: not a JUnit XML report"),
        ])
    func malformed(_ xml: String, _ expected: String) {
        #expect {
            _ = try JUnitResults.parse(Data(xml.utf8), file: "report.xml")
        } throws: { error in
            "\(error)".hasPrefix(expected)
        }
    }

    @Test("hostile reports: nested entities do not expand without bound, a file past the limit is refused unread")
    func hostile() throws {
        var laughs = "<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [\n<!ENTITY lol0 \"lol\">\n"
        for level in 1...12 {
            laughs += "<!ENTITY lol\(level) \"" + String(repeating: "&lol\(level - 1);", count: 10) + "\">\n"
        }
        laughs += "]>\n<testsuites><testcase name=\"a\"><failure message=\"&lol12;\"/></testcase></testsuites>"
        let clock = ContinuousClock()
        let start = clock.now
        let outcome = Result { try JUnitResults.parse(Data(laughs.utf8), file: "laughs.xml") }
        #expect(clock.now - start < .seconds(5))
        if case .success(let results) = outcome {
            // Read without expanding: whatever the message holds, it is not 10^12 characters.
            #expect((results.first?.message?.count ?? 0) < 10_000_000)
        }
        let big = Data(count: JUnitResults.maximumBytes + 1)
        #expect(throws: RunnerResultsError.self) { try JUnitResults.parse(big, file: "big.xml") }
        // One entity of 100 KB referenced 160,000 times: refused before anything expands, naming the DOCTYPE's line.
        let linear =
            "<?xml version=\"1.0\"?>\n<!-- a comment -->\n<!DOCTYPE t [<!ENTITY e \"\(String(repeating: "x", count: 100_000))\">]>\n"
            + "<testsuites><testcase name=\"a\"><failure>\(String(repeating: "&e;", count: 160_000))</failure></testcase></testsuites>"
        #expect {
            try JUnitResults.parse(Data(linear.utf8), file: "linear.xml")
        } throws: { error in
            "\(error)".hasPrefix("linear.xml:3: not read: it declares entities of its own")
        }
        // Entities behind a prolog longer than what is looked through, or in UTF-16, are refused all the same.
        let hidden = "<!--\(String(repeating: "-", count: 1 << 20))-->\n<!DOCTYPE t [<!ENTITY e \"x\">]>\n<testsuites/>"
        #expect(throws: RunnerResultsError.self) { try JUnitResults.parse(Data(hidden.utf8), file: "hidden.xml") }
        let utf16 = "<?xml version=\"1.0\" encoding=\"UTF-16\"?><!DOCTYPE t [<!ENTITY e \"x\">]><testsuites/>".data(
            using: .utf16)!
        #expect(throws: RunnerResultsError.self) { try JUnitResults.parse(utf16, file: "utf16.xml") }
        // A DOCTYPE without entities of its own is read.
        let plain =
            #"<?xml version="1.0"?><!DOCTYPE testsuites SYSTEM "junit.dtd"><testsuites><testcase name="a"/></testsuites>"#
        #expect(try JUnitResults.parse(Data(plain.utf8), file: "plain.xml").map(\.name) == ["a"])
    }

    @Test("a valid report past 10 MB (a hundred thousand tests) is read whole")
    func large() throws {
        let cases = (0..<120_000).map { #"<testcase classname="suite" name="t\#($0)" time="0.001"/>"# }.joined(
            separator: "\n")
        let results = try JUnitResults.parse(
            Data("<testsuites><testsuite name=\"s\">\n\(cases)\n</testsuite></testsuites>".utf8), file: "big.xml")
        #expect(results.count == 120_000 && results.last?.name == "t119999")
    }
}
