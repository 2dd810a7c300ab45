import Foundation
import MockServer
import OrchestrateModel
import Orchestrator
import Suites
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
    func full() async throws {
        let config = try parse(
            """
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
        let scenarios = try await SuiteSources(config.suite).scenarios(config.suiteContext)
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

    @Test(
        "mistakes name file:line:column",
        arguments: [
            ("workrs: 3\n", "orchestrate.yml:1:1: unknown key \"workrs\" in the top level"),
            ("workers: many\n", "orchestrate.yml:1:10: workers must be a whole number"),
            ("workers: 0\n", "orchestrate.yml:1:10: workers must be from 1 to 4096 (got 0)"),
            ("suite:\n  timeout: soon\n", "orchestrate.yml:2:12: suite.timeout must be a positive duration"),
            (
                "suite:\n  scenarios:\n    - { id: a, command: x }\n    - { id: a, command: y }\n",
                "orchestrate.yml:4:13: duplicate scenario id \"a\" (first defined on line 3)"
            ),
            ("suite:\n  scenarios:\n    - { id: a }\n", "orchestrate.yml:3:7: scenario \"a\" has no command"),
            ("suite:\n  scenarios:\n    - { command: x }\n", "orchestrate.yml:3:7: a scenario needs an id"),
            (
                "suite:\n  scenarios:\n    - { id: a, command: x, colour: red }\n",
                "orchestrate.yml:3:28: unknown key \"colour\" in a scenario"
            ),
            ("suite:\n  scenarios: { a: b }\n", "orchestrate.yml:2:14: suite.scenarios must be a list"),
            ("mock:\n  mode: sometimes\n", "orchestrate.yml:2:9: mock.mode must be one of replay, record, live, mock"),
            ("workers: [1\n", "orchestrate.yml:2:1: invalid YAML"),
            (
                "mock:\n  stubs:\n    - request: { path: /a }\n      response: { status: 1000 }\n",
                "orchestrate.yml:3:7: mock.stubs[0].response.status: must be an HTTP status code"
            ),
            (
                "mock:\n  stubs:\n    - { request: { path: /a }, response: { fault: slow } }\n",
                "orchestrate.yml:3:7: mock.stubs[0].response.fault: must be one of reset, close-before-body, dribble, malformed"
            ),
            (
                "mock:\n  stubs:\n    - { request: { path: /a } }\n",
                "orchestrate.yml:3:7: mock.stubs[0]: a stub needs exactly one of"
            ),
            (
                "mock:\n  stubs:\n    - { request: { path: /a }, response: { file: nowhere.json } }\n",
                "orchestrate.yml:3:7: mock.stubs[0].response.file: cannot read /project/nowhere.json"
            ),
            (
                "mock:\n  match: [method, colour]\n",
                "orchestrate.yml:2:19: mock.match entries are method, path, query, body or header:NAME"
            ),
            (
                "mock:\n  redact: { json: [password] }\n",
                "orchestrate.yml:2:20: mock.redact.json: password: a JSON path starts with $"
            ),
            ("mock:\n  rewrite: sometimes\n", "orchestrate.yml:2:12: mock.rewrite must be true or false"),
            ("redact:\n  env: SHOP_PIN\n", "orchestrate.yml:2:8: redact.env must be a list of variable names"),
            ("redact:\n  env: [\"A=B\"]\n", "orchestrate.yml:2:9: \"A=B\" is not a valid environment variable name"),
            ("redact:\n  headers: [x-key]\n", "orchestrate.yml:2:3: unknown key \"headers\" in redact"),
            ("selection:\n  ignore: [\"\"]\n", "orchestrate.yml:2:12: selection.ignore: \"\" names no file"),
            ("selection:\n  ignore: [\"./\"]\n", "orchestrate.yml:2:12: selection.ignore: \"./\" names no file"),
            (
                "selection:\n  everything: [\"docs/..\"]\n",
                "orchestrate.yml:2:16: selection.everything: \"docs/..\" names no file"
            ),
            (
                "selection:\n  endpoints:\n    - { files: [a/**], endpoints: [\"GET https://api.test/v1\"] }\n",
                "orchestrate.yml:3:36: selection.endpoints.endpoints: \"GET https://api.test/v1\" is not an endpoint"
            ),
            (
                "selection:\n  endpoints:\n    - { files: [a/**] }\n",
                "orchestrate.yml:3:7: an entry of selection.endpoints needs files and endpoints"
            ),
        ])
    func errors(yaml: String, expected: String) {
        let message = error(yaml)
        #expect(message.hasPrefix(expected), "\(message)")
    }

    @Test("the mock section: matching, ignored and redacted fields, rewriting, repeat and stubs")
    func mockSection() throws {
        let config = try parse(
            """
            mock:
              mode: hybrid
              hosts: { api.test: "https://api.example.com" }
              match: [method, path, "header:Accept-Language"]
              ignore: { json: ["$.requestId"], query: [cacheBuster] }
              redact: { headers: [x-api-key], json: ["$.password", "$..token"] }
              rewrite: false
              repeat: fail
              stubs:
                - request: { method: get, path: "/v1/slots/{day}" }
                  response: { json: { day: "{{request.params.day}}", free: 3, open: true }, template: true, delay: 50ms }
                - request: { path: /v1/appointments }
                  collection: { name: appointments, items: [{ id: 1 }] }
            """)
        let server = config.mock.server
        #expect(config.mock.mode == .hybrid)
        #expect(server.match == [.method, .path] && server.matchHeaders == ["accept-language"])
        #expect(server.ignoredJSON.map(\.description) == ["$.requestId"] && server.ignoredQuery == ["cacheBuster"])
        #expect(server.redactedJSON.map(\.description) == ["$.password", "$..token"])
        #expect(server.redactedHeaders.contains("x-api-key") && server.redactedHeaders.contains("authorization"))
        #expect(!server.rewriteURLs && !server.repeatLast)
        #expect(server.stubs.count == 2)
        #expect(server.stubs[0].method == "GET" && server.stubs[0].responses[0].delay == .milliseconds(50))
        #expect(server.stubs[0].responses[0].template != nil)
        #expect(server.stubs[1].collection?.items == [.object(["id": .integer(1)])])
    }

    @Test(
        "secret environment values: named in redact.env or looking secret; stored as the placeholder, given back by scenario"
    )
    func secretEnvironment() async throws {
        let config = try parse(
            """
            redact: { env: [SHOP_PIN] }
            suite:
              env: { API_TOKEN: tok-123456, SHOP_PIN: "4711", APP_ENV: test }
              scenarios:
                - { id: a, command: x, env: { DB_PASSWORD: pw-123456 } }
                - { id: b, command: x }
            """)
        let secrets = config.secretEnvironment(inherited: ["GITHUB_TOKEN": "ghp-123456", "PATH": "/usr/bin"])
        #expect(secrets.value("SHOP_PIN", scenario: "b") == "4711")
        #expect(
            secrets.value("DB_PASSWORD", scenario: "a") == "pw-123456"
                && secrets.value("DB_PASSWORD", scenario: "b") == nil)
        #expect(secrets.value("APP_ENV", scenario: "a") == nil)
        #expect(
            secrets.secrets.values == ["tok-123456", "pw-123456", "ghp-123456"], "4711 is too short to be searched for")
        let stored = try await SuiteSources(config.suite).scenarios(config.suiteContext).map {
            $0.withSecretsRedacted(config.redact.isSecret)
        }
        #expect(
            stored[0].environment == [
                "API_TOKEN": "[REDACTED]", "SHOP_PIN": "[REDACTED]", "APP_ENV": "test", "DB_PASSWORD": "[REDACTED]",
            ])
    }

    @Test(
        "suite.batch: auto by default, bounds that stay bounds, auto: false to fill them; anything else names its line")
    func batch() throws {
        func bounds(_ batch: String) throws -> Batch {
            let config = try parse("suite:\n  command: run {id}\n  scenarios: [{ id: a }]\n" + batch)
            return config.suite.batch.batch("run {ids}")
        }
        #expect(try parse("suite:\n  scenarios: [{ id: a, command: x }]\n").suite.batch.auto)
        #expect(try bounds("").size == 10_000)
        #expect(try bounds("  batch: auto\n").milliseconds == 600_000)
        let bounded = try bounds("  batch: { size: 50, seconds: 120 }\n")
        #expect(bounded.size == 50 && bounded.milliseconds == 120_000)
        #expect(
            try parse("suite:\n  scenarios: [{ id: a, command: x }]\n  batch: { auto: false }\n").suite.batch.auto
                == false)
        #expect(try bounds("  batch: { auto: false }\n").size == 10)
        #expect(error("suite:\n  scenarios: [{ id: a, command: x }]\n  batch: fast\n").contains("orchestrate.yml:3"))
        #expect(
            error("suite:\n  scenarios: [{ id: a, command: x }]\n  batch: fast\n").contains("suite.batch must be auto"))
    }

    @Test("a scenario's mode tag wins over the run's mode")
    func scenarioMode() {
        let scenario = Scenario(id: "a", name: "a", command: "x", tags: ["smoke", "@mock"], timeoutMilliseconds: 1)
        #expect(scenario.mode(inRun: .replay) == .mock)
        #expect(
            Scenario(id: "b", name: "b", command: "x", tags: ["smoke"], timeoutMilliseconds: 1).mode(inRun: .record)
                == .record)
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
