import Orchestrator
import Testing

/// Tables on a terminal fit its width; elsewhere every cell is whole.
@Suite("Text tables")
struct TextTableTests {
    static let runIDs = [
        "52268bab-4951-40bc-91a5-cb93f71d885b", "e03e8311-4ea8-40bd-a3a9-bfcac8ef84b0",
        "9cd9a03c-87ac-4497-ba58-887bab26cf6e",
    ]

    @Test("the runs of one project and host fit 100 columns: the columns that never change move under the table")
    func runs() {
        let table = TextTable(
            header: [
                "RUN", "STARTED (UTC)", "STATE", "TESTS", "PASSED", "FLAKY", "FAILED", "LEFT", "TIME", "HOSTS", "SLOTS",
                "PROJECT", "BRANCH", "REVISION",
            ],
            rows: Self.runIDs.enumerated().map { index, id in
                [
                    id, "2026-11-26 12:3\(index)", "finished", "881", "\(880 - index)", "0", "\(1 + index)", "0",
                    "1.\(index)s", "ci-runner-17", "8", "checkout-service", "feature/payments", "11fb07305e65",
                ]
            }, elidable: ["HOSTS", "PROJECT", "BRANCH"])
        let whole = table.render(fitting: nil)
        #expect(whole.split(separator: "\n").allSatisfy { $0.count > 100 }, "as wide as its cells off a terminal")
        let fitted = table.render(fitting: 100)
        let lines = fitted.split(separator: "\n").map(String.init)
        #expect(lines.allSatisfy { $0.count <= 100 }, "\(fitted)")
        #expect(Self.runIDs.allSatisfy { id in lines.contains { $0.hasPrefix(id) } }, "run ids stay whole: \(fitted)")
        #expect(lines[4].hasPrefix("in every row: STATE finished, "), "\(fitted)")
        #expect(fitted.contains("PROJECT checkout-service") && fitted.contains("BRANCH feature/payments"), "\(fitted)")
        #expect(lines[0].contains("FAILED") && lines[1].contains("880") && lines[3].contains("  3  "), "\(fitted)")
    }

    @Test("long test ids lose their middle, keeping where they start and end; the last column is cut")
    func elided() {
        let ids = (1...3).map {
            "tests/integration/payments/test_refunds_and_chargebacks.py::test_partial_refund_\($0)"
        }
        let table = TextTable(
            header: ["SCORE", "PASSED", "FLIPS", "VERDICTS", "SCENARIO", "LAST EVIDENCE"],
            rows: ids.map {
                [
                    "0.31", "3/7", "6/6", "5 nondeterministic", $0,
                    "failed, then passed in this run, with nothing else changed",
                ]
            }, elidable: ["VERDICTS", "SCENARIO"])
        let lines = table.render(fitting: 100).split(separator: "\n").map(String.init)
        #expect(lines.allSatisfy { $0.count <= 100 }, "\(lines)")
        for (line, number) in zip(lines.dropFirst(), 1...3) {
            #expect(line.contains("tests/integ") && line.contains("…") && line.contains("refund_\(number)"), "\(line)")
        }
        #expect(TextTable.elided("abcdefghij", to: 5) == "ab…ij")
        #expect(TextTable.elided("abc", to: 5) == "abc")
    }
}
