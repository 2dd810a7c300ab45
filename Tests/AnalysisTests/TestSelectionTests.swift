import Analysis
import OrchestrateModel
import OrchestrateTesting
import Testing

@Suite("Selection from footprints")
struct TestSelectionTests {
    static let revision = "r1"

    /// A known test that has not failed lately, with a footprint at ``revision``.
    static func test(
        _ id: String, files: [String] = [], endpoints: [String] = [], expected: Int64? = 1000
    ) -> TestSelection.Test {
        TestSelection.Test(
            id: id, footprint: Footprint(revision: revision, files: files, endpoints: endpoints),
            known: true, failedRecently: false, expectedMilliseconds: expected)
    }

    static let suite = [
        test("tests/test_cart.py::test_add", files: ["tests/test_cart.py"], endpoints: ["POST api.shop.test/v1/carts"]),
        test(
            "tests/test_cart.py::test_show", files: ["tests/test_cart.py"],
            endpoints: ["GET api.shop.test/v1/carts/{id}"]),
        test("tests/test_pay.py::test_pay", files: ["tests/test_pay.py", "recordings/pay.har"]),
        test("PayTests.CardTests/testDecline()", files: ["Tests/PayTests/"]),
    ]

    static let rules = TestSelection.Rules(
        everything: [PathGlob("/orchestrate.yml"), PathGlob("requirements.txt")],
        ignore: [PathGlob("*.md"), PathGlob("docs/")],
        sources: [
            TestSelection.Source(
                files: [PathGlob("server/carts/**/*.py")], endpoints: [EndpointPattern("GET api.shop.test/v1/carts/*")!]
            )
        ])

    static func decide(
        _ tests: [TestSelection.Test] = suite, changed: Set<String>, sample: Double = 0
    ) -> TestSelection.Decision {
        var random = SeededRandom(name: "selection")
        return TestSelection(rules: rules).decide(
            tests, changed: [revision: changed], sample: sample, using: &random)
    }

    static func reasons(_ decision: TestSelection.Decision) -> [String: TestSelection.Reason] {
        Dictionary(uniqueKeysWithValues: decision.selected.map { ($0.id, $0.reason) })
    }

    @Test("a changed file runs the tests whose footprint names it, or a folder above it; the rest are left out")
    func touches() {
        let decision = Self.decide(changed: ["tests/test_cart.py", "Tests/PayTests/Cards/DeclineTests.swift"])
        #expect(
            Self.reasons(decision) == [
                "tests/test_cart.py::test_add": .touches("tests/test_cart.py"),
                "tests/test_cart.py::test_show": .touches("tests/test_cart.py"),
                "PayTests.CardTests/testDecline()": .touches("Tests/PayTests/Cards/DeclineTests.swift"),
            ])
        #expect(decision.skipped.map(\.id) == ["tests/test_pay.py::test_pay"])
        #expect(decision.skipped.first?.reason == "its footprint touches none of the 2 changed files")
        #expect(decision.savedMilliseconds == 1000)
        #expect(decision.selected.map(\.id).first == "tests/test_cart.py::test_add", "in the suite's order")
    }

    @Test("a cassette is part of a footprint: a re-recorded cassette runs its test")
    func cassette() {
        let decision = Self.decide(changed: ["recordings/pay.har"])
        #expect(Self.reasons(decision) == ["tests/test_pay.py::test_pay": .touches("recordings/pay.har")])
    }

    @Test("a changed handler runs the tests that called an endpoint it serves, and no other")
    func endpoints() {
        let decision = Self.decide(changed: ["server/carts/views/show.py"])
        #expect(
            Self.reasons(decision) == [
                "tests/test_cart.py::test_show": .calls(
                    endpoint: "GET api.shop.test/v1/carts/{id}", servedBy: "server/carts/views/show.py")
            ])
        #expect(decision.skipped.count == 3)
    }

    @Test("a changed file no footprint tracks runs every test; an ignored one runs none")
    func untracked() {
        let helper = Self.decide(changed: ["tests/conftest.py"])
        #expect(decision(helper, allAre: .untracked("tests/conftest.py")))
        let docs = Self.decide(changed: ["README.md", "docs/selection/how.txt"])
        #expect(docs.selected.isEmpty && docs.skipped.count == 4)
        let nothing = Self.decide(changed: [])
        #expect(nothing.selected.isEmpty)
        #expect(nothing.skipped.allSatisfy { $0.reason == "nothing changed since its footprint's revision" })
    }

    @Test("a file every test depends on (the configuration, a lock file) runs every test")
    func everything() {
        #expect(decision(Self.decide(changed: ["orchestrate.yml"]), allAre: .everything("orchestrate.yml")))
        #expect(
            decision(
                Self.decide(changed: ["services/api/requirements.txt"]),
                allAre: .everything("services/api/requirements.txt")))
        // Only at the root: `/orchestrate.yml` names that file alone.
        #expect(
            decision(Self.decide(changed: ["sub/orchestrate.yml"]), allAre: .untracked("sub/orchestrate.yml")))
    }

    @Test("new tests, tests that failed lately and tests without a footprint run whatever changed")
    func always() {
        var suite = Self.suite
        suite[0].known = false
        suite[1].failedRecently = true
        suite[2].footprint = nil
        let decision = Self.decide(suite, changed: ["README.md"])
        #expect(
            Self.reasons(decision) == [
                "tests/test_cart.py::test_add": .new,
                "tests/test_cart.py::test_show": .failedRecently,
                "tests/test_pay.py::test_pay": .noFootprint,
            ])
        #expect(decision.skipped.map(\.id) == ["PayTests.CardTests/testDecline()"])
    }

    @Test("a footprint's changes are those since its own revision")
    func perRevision() {
        var suite = Self.suite
        suite[3].footprint?.revision = "r0"
        var random = SeededRandom(name: "selection")
        let decision = TestSelection(rules: Self.rules).decide(
            suite, changed: [Self.revision: [], "r0": ["Tests/PayTests/A.swift"]], using: &random)
        #expect(Self.reasons(decision) == ["PayTests.CardTests/testDecline()": .touches("Tests/PayTests/A.swift")])
    }

    @Test("a test that names no file of its own runs for any changed file that is neither ignored nor served")
    func opaque() {
        var suite = Self.suite
        suite.append(
            TestSelection.Test(
                id: "checkout", footprint: Footprint(revision: Self.revision, files: [], endpoints: []),
                known: true, failedRecently: false, opaque: true))
        let decision = Self.decide(suite, changed: ["tests/test_pay.py", "README.md"])
        #expect(Self.reasons(decision)["checkout"] == .opaque("tests/test_pay.py"), "\(decision.selected)")
        #expect(Self.decide(suite, changed: ["README.md"]).selected.isEmpty, "an ignored file breaks nothing")
        #expect(
            Self.reasons(Self.decide(suite, changed: ["server/carts/show.py"]))["checkout"] == nil,
            "a served file breaks the tests that called what it serves")
    }

    @Test("a mapping whose endpoints no footprint called says nothing: a change to its files runs every test")
    func unreachableMapping() {
        var rules = Self.rules
        rules.sources.append(
            TestSelection.Source(
                files: [PathGlob("server/pay/**")], endpoints: [EndpointPattern("POST api.other.test/v1/pay")!]))
        var random = SeededRandom(name: "selection")
        let decision = TestSelection(rules: rules).decide(
            Self.suite, changed: [Self.revision: ["server/pay/charge.py"]], using: &random)
        #expect(decision.skipped.isEmpty, "\(decision.skipped)")
        #expect(decision.selected.allSatisfy { $0.reason == .untracked("server/pay/charge.py") })
    }

    @Test("a footprint that called more endpoints than it keeps calls every endpoint; hosts compare without case")
    func everyEndpoint() {
        var suite = Self.suite
        suite[2].footprint?.endpoints = [EndpointPattern.every]
        suite[3].footprint?.endpoints = ["GET API.Shop.Test/v1/carts/{id}"]
        let decision = Self.decide(suite, changed: ["server/carts/show.py"])
        #expect(
            Self.reasons(decision) == [
                "tests/test_cart.py::test_show": .calls(
                    endpoint: "GET api.shop.test/v1/carts/{id}", servedBy: "server/carts/show.py"),
                "tests/test_pay.py::test_pay": .calls(endpoint: "*", servedBy: "server/carts/show.py"),
                "PayTests.CardTests/testDecline()": .calls(
                    endpoint: "GET API.Shop.Test/v1/carts/{id}", servedBy: "server/carts/show.py"),
            ])
    }

    @Test(
        "a file whose lines a test's coverage has touches it only where the change reaches them: the line beside a hunk, or the statement it may be part of"
    )
    func lines() {
        let footprint = { (id: String, lines: String) in
            TestSelection.Test(
                id: id,
                footprint: Footprint(
                    revision: Self.revision, files: ["tests/test_\(id).py", "shop/cart.py"], endpoints: [],
                    covers: ["py"], lines: ["shop/cart.py": LineSet(Substring(lines))!]),
                known: true, failedRecently: false)
        }
        // remove's statement on line 30 spans lines 30-34: coverage reports its first line only.
        let tests = [footprint("add", "1-3,10-20"), footprint("remove", "1-3,30,35-40")]
        func selected(_ hunk: String) -> [String] {
            var random = SeededRandom(name: "lines")
            return TestSelection(rules: Self.rules).decide(
                tests, changed: [Self.revision: ["shop/cart.py"]],
                hunks: [Self.revision: ["shop/cart.py": LineSet(Substring(hunk))!]], using: &random
            ).selected.map(\.id)
        }
        #expect(selected("35") == ["remove"], "a line only remove ran")
        #expect(selected("21") == ["add"], "the line after add's last")
        #expect(selected("2") == ["add", "remove"], "import-time lines both ran")
        #expect(selected("33") == ["remove"], "inside the statement remove ran from line 30")
        #expect(selected("25-27") == ["add"], "lines no test ran: the statement before them may span them")
        var random = SeededRandom(name: "lines")
        let whole = TestSelection(rules: Self.rules).decide(
            tests, changed: [Self.revision: ["shop/cart.py"]], using: &random)
        #expect(whole.selected.count == 2, "no hunks: the whole file changed")
    }

    @Test(
        "a file only coverage names runs the tests without coverage of their own; a file no coverage measured runs every test"
    )
    func coverageOnly() {
        let covered = TestSelection.Test(
            id: "tests/test_cart.py::test_add",
            footprint: Footprint(
                revision: Self.revision, files: ["tests/test_cart.py", "shop/cart.py", "shop/pay.py"], endpoints: [],
                covers: ["py"],
                lines: ["shop/cart.py": LineSet(Substring("1-9"))!, "shop/pay.py": LineSet(Substring(""))!]),
            known: true, failedRecently: false)
        let uncovered = Self.test("features/cart.feature: add", files: ["features/cart.feature"])
        var random = SeededRandom(name: "coverage")
        let rules = TestSelection(rules: Self.rules)
        let pay = rules.decide(
            [covered, uncovered], changed: [Self.revision: ["shop/pay.py"]],
            hunks: [Self.revision: ["shop/pay.py": LineSet(Substring("3"))!]], using: &random)
        #expect(
            Self.reasons(pay) == ["features/cart.feature: add": .untracked("shop/pay.py")],
            "measured, not run by the covered test: only the test without coverage runs")
        let unmeasured = rules.decide(
            [covered, uncovered], changed: [Self.revision: ["shop/vat.py"]], using: &random)
        #expect(unmeasured.selected.count == 2, "a file no coverage measured: \(unmeasured.selected)")
    }

    @Test("--sample runs a share of the tests left out, at least one, marked as sampled")
    func sample() {
        let tests = (0..<20).map { Self.test("t\($0)", files: ["t\($0).py"]) }
        let decision = Self.decide(tests, changed: ["t0.py"], sample: 0.1)
        let sampled = decision.selected.filter { $0.reason == .sampled }
        #expect(sampled.count == 2, "a tenth of the 19 left out, rounded")
        #expect(decision.skipped.count == 17)
        #expect(Set(sampled.map(\.id)).isDisjoint(with: ["t0"]))
        let small = Self.decide(Array(tests.prefix(3)), changed: ["t0.py"], sample: 0.01)
        #expect(small.selected.count(where: { $0.reason == .sampled }) == 1)
        let all = Self.decide(tests, changed: ["t0.py"], sample: 1)
        #expect(all.skipped.isEmpty && all.selected.count == 20)
    }

    private func decision(_ decision: TestSelection.Decision, allAre reason: TestSelection.Reason) -> Bool {
        decision.skipped.isEmpty && decision.selected.count == Self.suite.count
            && decision.selected.allSatisfy { $0.reason == reason }
    }
}

@Suite("Path and endpoint patterns")
struct PathGlobTests {
    @Test("components, stars within one, ** across any number, a name alone in any folder, a folder's contents")
    func paths() {
        #expect(PathGlob("server/*.py").matches("server/carts.py"))
        #expect(!PathGlob("server/*.py").matches("server/carts/show.py"))
        #expect(PathGlob("server/**/*.py").matches("server/carts.py"))
        #expect(PathGlob("server/**/*.py").matches("server/a/b/c.py"))
        #expect(PathGlob("*.md").matches("docs/deep/README.md"))
        #expect(PathGlob("docs/").matches("docs/a/b.txt"))
        #expect(!PathGlob("docs/").matches("src/docs.txt"))
        #expect(PathGlob("/Package.swift").matches("Package.swift"))
        #expect(!PathGlob("/Package.swift").matches("sub/Package.swift"))
        #expect(PathGlob("./src/?.c").matches("src/a.c"))
        #expect(!PathGlob("src/?.c").matches("src/ab.c"))
        #expect(PathGlob("sub/../server/**").matches("server/a.py"), ".. is worked out in the text")
        #expect(!PathGlob("../server/**").matches("server/a.py"), "above the root names nothing")
        #expect(!PathGlob("").matches("a") && !PathGlob("./").matches("a") && !PathGlob("/").matches("a"))
    }

    @Test("a hostile pattern against a deep path answers at once (no backtracking)")
    func hostile() {
        let pattern = PathGlob(String(repeating: "**/", count: 40) + String(repeating: "*a", count: 40) + "b")
        let path = Array(repeating: String(repeating: "a", count: 60), count: 40).joined(separator: "/")
        #expect(!pattern.matches(path))
    }

    @Test("an endpoint pattern: a method or none, a star per path segment, ** for the rest")
    func endpoints() throws {
        let show = try #require(EndpointPattern("GET api.shop.test/v1/carts/*"))
        #expect(show.matches("GET api.shop.test/v1/carts/{id}"))
        #expect(!show.matches("POST api.shop.test/v1/carts/{id}"))
        #expect(!show.matches("GET api.shop.test/v1/carts/{id}/items"))
        let any = try #require(EndpointPattern("api.shop.test/v1/**"))
        #expect(any.matches("DELETE api.shop.test/v1/carts/{id}/items"))
        #expect(!any.matches("GET other.test/v1/carts"))
        #expect(EndpointPattern("") == nil)
        #expect(EndpointPattern("get api.shop.test/x") == nil, "a method is upper case")
        #expect(EndpointPattern("GET /v1/carts") == nil, "a host comes first")
        #expect(EndpointPattern("GET a b") == nil)
        #expect(EndpointPattern("GET") == nil, "a method alone")
        #expect(EndpointPattern("GET https://api.shop.test/v1") == nil, "a URL is not an endpoint")
        #expect(try #require(EndpointPattern("*.shop.test/**")).matches("GET api.shop.test/v1/x"))
    }
}
