import OrchestrateModel
import Orchestrator
import Testing

@Suite("Selecting scenarios (--only, --tags)")
struct ScenarioSelectionTests {
    static let config = OrchestrateConfig(directory: "/project", path: "orchestrate.yml")

    static let scenarios: [Scenario] = [
        Scenario(id: "login", name: "Log in", command: "true", tags: ["smoke"], timeoutMilliseconds: 1000),
        Scenario(
            id: "pay: visa", name: "Pay", command: "true", tags: ["smoke", "slow"], timeoutMilliseconds: 1000,
            uri: "Features/pay.feature", line: 14, definitionLine: 5),
        Scenario(
            id: "pay: cash", name: "Pay", command: "true", tags: ["wip"], timeoutMilliseconds: 1000,
            uri: "Features/pay.feature", line: 15, definitionLine: 5),
        Scenario(
            id: "refund", name: "Refund", command: "true", timeoutMilliseconds: 1000, uri: "Features/pay.feature",
            line: 30),
    ]

    func ids(_ only: [String] = [], tags: String? = nil) throws -> [String] {
        try ScenarioSelection(only: only, tags: tags).select(from: Self.scenarios, configPath: Self.config.path).map(
            \.id)
    }

    @Test("ids, feature files and lines as Cucumber takes them, in the config's order")
    func only() throws {
        #expect(try ids() == ["login", "pay: visa", "pay: cash", "refund"])
        #expect(try ids(["refund", "login"]) == ["login", "refund"])
        #expect(try ids(["Features/pay.feature"]) == ["pay: visa", "pay: cash", "refund"])
        #expect(try ids(["Features/pay.feature:15:30"]) == ["pay: cash", "refund"], "a row's line, a scenario's line")
        #expect(try ids(["./Features/pay.feature:5"]) == ["pay: visa", "pay: cash"], "an outline's line: all its rows")
    }

    @Test("tag expressions, and both selections together")
    func tags() throws {
        #expect(try ids(tags: "@smoke and not @slow") == ["login"])
        #expect(try ids(tags: "@wip or @slow") == ["pay: visa", "pay: cash"])
        #expect(try ids(["Features/pay.feature"], tags: "@smoke") == ["pay: visa"])
    }

    @Test("a selector that selects nothing, a bad expression and an empty suite are errors naming what is wrong")
    func errors() {
        let unknown = #expect(throws: UsageError.self) { try ids(["nope"]) }
        #expect(
            unknown?.description
                == "--only nope: no such scenario id or feature FILE[:LINE] in orchestrate.yml (see orchestrate scenarios)"
        )
        #expect(throws: UsageError.self) { try ids(tags: "@nothing-has-this") }
        #expect(throws: UsageError.self) { try ids(tags: "@a and or @b") }
        #expect(throws: ConfigError.self) { try ScenarioSelection().select(from: [], configPath: Self.config.path) }
        #expect(throws: UsageError.self) { try ids(["Features/pay.feature:99"]) }
    }
}

@Suite("git's hunks as the lines a change touched")
struct HunkTests {
    @Test("changed ranges by the old file's lines; added lines as the line they follow; files by their old path")
    func hunks() {
        let diff = """
            diff --git a/shop/cart.py b/shop/cart.py
            index 1..2 100644
            --- a/shop/cart.py
            +++ b/shop/cart.py
            @@ -3,2 +3,3 @@ def total(items):
            -    return sum(items)
            +    return sum(items) + 0
            @@ -10,0 +12,2 @@ def more():
            +    pass
            @@ -20 +22 @@
            --- a/z
            +y
            @@ -30 +32 @@
            -x
            +y
            diff --git a/shop/new.py b/shop/new.py
            new file mode 100644
            --- /dev/null
            +++ b/shop/new.py
            @@ -0,0 +1,2 @@
            +a
            """
        let hunks = ChangeSelection.parseHunks(diff).mapValues(\.description)
        #expect(hunks == ["shop/cart.py": "3-4,10,20,30"], "a removed line that reads like a header is a line")
    }
}
