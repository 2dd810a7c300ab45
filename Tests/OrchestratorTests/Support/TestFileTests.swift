import OrchestrateModel
import Testing

/// The file a test's id names, for annotations and for the files a test owns.
@Suite("The file a test's id names")
struct TestFileTests {
    @Test(
        "pytest's path::name and a jest file's path name a file; a Swift test, a file with no test extension and a plain name do not",
        arguments: [
            ("tests/test_cart.py::TestCart::test_add[1-2]", "tests/test_cart.py"),
            ("test_pay.py::test_pay", "test_pay.py"),
            ("src/cart.test.ts", "src/cart.test.ts"),
            ("GraphQLTests.SubscriptionTests/arguments()", nil),
            ("docs/notes.txt::test", nil),
            ("checkout", nil),
            (":::x.py", nil),
            ("my tests/test_a.py::test", nil),
            ("tests/x.py/::y", nil),
            ("caf\u{E9}/t\u{E9}st_\u{6F22}.py::t", "caf\u{E9}/t\u{E9}st_\u{6F22}.py"),
        ] as [(String, String?)])
    func named(id: String, file: String?) {
        #expect(RunReport.ScenarioEntry.file(namedBy: id) == file)
    }
}
