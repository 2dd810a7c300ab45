import Foundation
import OrchestrateModel
import Reports
import Testing

@Suite("coverage.py's contexts as the files each test ran")
struct CoverageContextsTests {
    @Test(
        "each test's files and lines, import-time code and measured files apart, installed packages and climbing paths left out"
    )
    func read() throws {
        let report = """
            {"meta": {"version": "7.17.5"}, "files": {
              "shop/cart.py": {"contexts": {"1": [""], "2": ["tests.test_cart.test_total", "tests.test_cart.test_empty"]}},
              "shop/pay.py": {"contexts": {"2": ["tests/test_pay.py::test_charge|run"]}},
              "/project/shop/tax.py": {"contexts": {"3": ["tests.test_cart.test_total"]}},
              "/usr/lib/python3/dist-packages/six.py": {"contexts": {"1": ["tests.test_cart.test_total"]}},
              "../elsewhere/x.py": {"contexts": {"1": ["tests.test_cart.test_total"]}}
            }}
            """
        let ran = try CoverageContexts.read(Data(report.utf8), directory: "/project").mapValues {
            $0.mapValues(\.description)
        }
        #expect(
            ran == [
                "tests.test_cart.test_total": ["shop/cart.py": "2", "shop/tax.py": "3"],
                "tests.test_cart.test_empty": ["shop/cart.py": "2"],
                "tests/test_pay.py::test_charge": ["shop/pay.py": "2"],
                "": ["shop/cart.py": "1", "shop/pay.py": "", "shop/tax.py": ""],
            ], "what ran outside a test, and what was only measured, under the empty context")
    }

    @Test("line sets: written as ranges and read back in any order as their union; a range meets one beside it or not")
    func lineSets() throws {
        let lines = LineSet(lines: [8, 1, 2, 3, 5, 2])
        #expect(lines.description == "1-3,5,8")
        #expect(try #require(LineSet("5,1-3,8,3-4")).description == "1-5,8")
        #expect(LineSet("0") == nil && LineSet("3-1") == nil && LineSet("x") == nil)
        #expect(
            lines.intersects(4...5) && lines.intersects(8...100) && !lines.intersects(6...7) && !lines.intersects(9...9)
        )
    }

    @Test("a report without contexts, or not coverage.py's at all, is an error saying so")
    func malformed() {
        #expect(throws: CoverageContexts.Malformed.self) {
            try CoverageContexts.read(Data(#"{"files": {"a.py": {"executed_lines": [1]}}}"#.utf8), directory: "/p")
        }
        #expect(throws: CoverageContexts.Malformed.self) {
            try CoverageContexts.read(Data("[1, 2]".utf8), directory: "/p")
        }
    }

    @Test(
        "the contexts that name a pytest id: pytest-cov's, and coverage.py's test function with and without a package")
    func naming() {
        #expect(
            CoverageContexts.contexts(naming: "tests/unit/test_cart.py::TestCart::test_add[2-3]") == [
                "tests/unit/test_cart.py::TestCart::test_add[2-3]", "tests.unit.test_cart.TestCart.test_add",
                "test_cart.TestCart.test_add",
            ])
        #expect(CoverageContexts.contexts(naming: "CartTests.testAdd") == ["CartTests.testAdd"])
    }
}
