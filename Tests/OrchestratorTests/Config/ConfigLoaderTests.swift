import Foundation
import OrchestrateModel
import Orchestrator
import Testing

@Suite("orchestrate.yml")
struct ConfigLoaderTests {
    func parse(_ yaml: String) throws(ConfigError) -> OrchestrateConfig {
        try ConfigLoader.parse(yaml, path: "orchestrate.yml", directory: "/project")
    }

    func error(_ yaml: String) -> String {
        do {
            _ = try parse(yaml)
            return "no error"
        } catch {
            return error.description
        }
    }

    @Test("a full config maps onto the settings, templates filled in and quoted")
    func full() throws {
        let config = try parse("""
            workers: 3
            retries: 2
            reports: out/reports
            lease: 10s
            suite:
              command: "./run-one {id} {name} {line}"
              timeout: 2m
              env: { APP_ENV: test, SHARED: suite }
              scenarios:
                - { id: login, tags: [smoke, "@fast"], env: { SHARED: mine } }
                - id: checkout
                  name: "Check out: it's paid"
                  command: "./checkout.sh"
                  timeout: 1500ms
            mock:
              mode: record
            """)
        #expect(config.workers == 3)
        #expect(config.retries == 2)
        #expect(config.lease == .seconds(10))
        let scenarios = config.scenarios()
        #expect(scenarios.map(\.id) == ["login", "checkout"])
        #expect(scenarios[0].command == "./run-one login login 10")
        #expect(scenarios[0].tags == ["smoke", "fast"])
        #expect(scenarios[0].environment == ["APP_ENV": "test", "SHARED": "mine"])
        #expect(scenarios[0].timeoutMilliseconds == 120_000)
        #expect(scenarios[1].command == "./checkout.sh")
        #expect(scenarios[1].name == "Check out: it's paid")
        #expect(scenarios[1].timeoutMilliseconds == 1500)
        #expect(config.mock.mode == .record)
        let filled = CommandTemplate.fill("run {name}", id: "x", name: "it's a \"test\"; rm -rf /", uri: "u", line: 1)
        #expect(filled == #"run 'it'\''s a "test"; rm -rf /'"#)
    }

    @Test("mistakes name file:line:column", arguments: [
        ("workrs: 3\n", "orchestrate.yml:1:1: unknown key \"workrs\" in the top level"),
        ("workers: many\n", "orchestrate.yml:1:10: workers must be a whole number"),
        ("workers: 0\n", "orchestrate.yml:1:10: workers must be at least 1"),
        ("suite:\n  timeout: soon\n", "orchestrate.yml:2:12: suite.timeout must be a positive duration"),
        ("suite:\n  scenarios:\n    - { id: a, command: x }\n    - { id: a, command: y }\n",
         "orchestrate.yml:4:13: duplicate scenario id \"a\" (first defined on line 3)"),
        ("suite:\n  scenarios:\n    - { id: a }\n", "orchestrate.yml:3:7: scenario \"a\" has no command"),
        ("suite:\n  scenarios:\n    - { command: x }\n", "orchestrate.yml:3:7: a scenario needs an id"),
        ("suite:\n  scenarios:\n    - { id: a, command: x, colour: red }\n", "orchestrate.yml:3:28: unknown key \"colour\" in a scenario"),
        ("suite:\n  scenarios: { a: b }\n", "orchestrate.yml:2:14: suite.scenarios must be a list"),
        ("mock:\n  mode: sometimes\n", "orchestrate.yml:2:9: mock.mode must be one of replay, record, live, mock"),
        ("workers: [1\n", "orchestrate.yml:2:1: invalid YAML"),
    ])
    func errors(yaml: String, expected: String) {
        let message = error(yaml)
        #expect(message.hasPrefix(expected), "\(message)")
    }

    @Test("durations read the way people write them")
    func durations() {
        #expect(DurationText.parse("90s") == .seconds(90))
        #expect(DurationText.parse("1.5s") == .milliseconds(1500))
        #expect(DurationText.parse("2m") == .seconds(120))
        #expect(DurationText.parse("250ms") == .milliseconds(250))
        #expect(DurationText.parse("1h") == .seconds(3600))
        #expect(DurationText.parse("30") == .seconds(30))
        #expect(DurationText.parse("soon") == nil)
        #expect(DurationText.parse("-1s") == nil)
    }
}
