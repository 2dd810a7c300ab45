import Foundation
import Logging
import MockServer
import OrchestrateKit
import OrchestrateModel
import OrchestrateTesting
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the steps of these tests drive: an "app" that reaches its backend only through OrchestrateKit's URLs.
final class NotesApp: Sendable {
    let environment: OrchestrateEnvironment
    let control: OrchestrateControl
    let seen = Mutex<[String]>([])

    init(environment: OrchestrateEnvironment, control: OrchestrateControl? = nil) {
        self.environment = environment
        self.control = control ?? OrchestrateControl(environment: environment)
    }

    func get(_ path: String) async throws -> [String: Any] {
        let url = environment.url(for: URL(string: "https://notes.test\(path)")!)
        let (data, _) = try await URLSession.shared.data(from: url)
        return try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
    }
}

@Suite struct ScenarioRunnerTests {
    static let pickle = #"""
        {"pickle":{"id":"7","uri":"Features/notes.feature","name":"Notes for a new user","language":"en","location":{"line":3,"column":3},
         "astNodeIds":["1"],"tags":[{"name":"@smoke","astNodeId":"0"}],"steps":[
          {"id":"2","astNodeIds":["a"],"type":"Context","text":"a new user signs up"},
          {"id":"3","astNodeIds":["b"],"type":"Action","text":"they write 2 notes","argument":{"dataTable":{"rows":[{"cells":[{"value":"title"}]},{"cells":[{"value":"milk"}]}]}}},
          {"id":"4","astNodeIds":["c"],"type":"Outcome","text":"the list shows \"2 notes\""},
          {"id":"5","astNodeIds":["d"],"type":"Outcome","text":"nothing else happens"}]}}
        """#

    static func steps(failOnCount: Bool = false) -> Steps<NotesApp> {
        var steps = Steps<NotesApp>()
        steps.given("a new user signs up") { app, _ in
            let email = try await app.control.recordedRandom("email") {
                "user-\(UUID().uuidString.prefix(8))@example.test"
            }
            app.seen.withLock { $0.append(email) }
            _ = try await app.get("/v1/users?email=\(email)")
        }
        steps.when("they write {int} note(s)") { app, match in
            #expect(match.tableRows == [["title": "milk"]])
            for number in 1...(try match.int(0)) { _ = try await app.get("/v1/notes/\(number)") }
        }
        steps.then("the list shows {string}") { _, match in
            if failOnCount { throw OrchestrateKitError(.argument, "expected \(match[0]) on screen, saw 1 note") }
        }
        return steps
    }

    @Test("a pickle runs step by step: steps reach the control API with their exchanges, randoms come back in replay")
    func runsAndReportsSteps() async throws {
        let upstream = try await TestUpstream.start(name: "notes")
        let folder = try TemporaryDirectory()
        var configuration = MockConfiguration()
        configuration.hosts = ["notes.test": upstream.url]
        let server = MockServer(configuration: configuration, logger: Logger(label: "kit-test"))
        try await server.start(port: 0)
        let collected = Task { () -> [MockEvent] in
            var events: [MockEvent] = []
            for await event in server.events { events.append(event) }
            return events
        }
        let environment = OrchestrateEnvironment([
            "ORCHESTRATE_MOCK_URL": "http://127.0.0.1:\(server.port!)", "ORCHESTRATE_PICKLE": Self.pickle,
        ])
        let cassette = folder.path + "/notes.har"
        let lines = Mutex<[String]>([])
        var runner = ScenarioRunner(steps: Self.steps(), control: OrchestrateControl(environment: environment))
        runner.output = { line in lines.withLock { $0.append(line) } }

        // Recorded: the last step has no definition, so the scenario does not pass.
        try server.begin(MockSession(mode: .record, cassettePath: cassette, scenarioID: "notes"))
        let recordApp = NotesApp(environment: environment)
        let recorded = await runner.main(arguments: []) { recordApp }
        try server.end()
        #expect(recorded == 1, "\(lines.withLock { $0 })")
        #expect(
            lines.withLock { $0 }.joined(separator: "\n").contains(
                " ms)\n             no step definition matches \"nothing else happens\"; add one: "
                    + #"steps.then("nothing else happens") { world, match in … }"#
            ))

        // Replayed with the upstream gone: the same e-mail comes back, so the same requests match.
        await upstream.stop()
        try server.begin(MockSession(mode: .replay, cassettePath: cassette, scenarioID: "notes"))
        let replayApp = NotesApp(environment: environment)
        let pickle = try Pickle(json: Self.pickle)
        let result = await runner.run(pickle, world: replayApp)
        try server.end()
        await server.shutdown()
        let events = await collected.value

        #expect(replayApp.seen.withLock { $0 } == recordApp.seen.withLock { $0 })
        #expect(result.steps.map(\.status) == [.passed, .passed, .passed, .undefined])
        let steps = events.compactMap { event -> Step? in if case .step(let step, _) = event { step } else { nil } }
        #expect(steps.count == 8)
        #expect(
            steps.prefix(4).map { "\($0.keyword)\($0.name): \($0.status)" } == [
                "Given a new user signs up: passed", "When they write 2 notes: passed",
                "Then the list shows \"2 notes\": passed", "Then nothing else happens: undefined",
            ])
        #expect(steps.allSatisfy { $0.finishedAt != nil && $0.finishedAt! >= $0.startedAt })
        let exchanges = events.compactMap { event -> Exchange? in
            if case .exchange(let exchange) = event { exchange } else { nil }
        }
        #expect(exchanges.count == 6)
        #expect(exchanges.map(\.stepPosition) == [1, 2, 2, 1, 2, 2])
        #expect(exchanges.suffix(3).allSatisfy { $0.mode == .replay && $0.matched })
    }

    @Test("after a failing step the rest are skipped and reported; the exit status is 1")
    func failureSkipsTheRest() async throws {
        let lines = Mutex<[String]>([])
        var runner = ScenarioRunner(
            steps: Self.steps(failOnCount: true), control: OrchestrateControl(environment: OrchestrateEnvironment([:])))
        runner.output = { line in lines.withLock { $0.append(line) } }
        // The app's requests go to an upstream that answers every path (no control API: steps are only printed).
        let upstream = try await TestUpstream.start(name: "notes")
        let pickle = try Pickle(json: Self.pickle)
        let app = NotesApp(
            environment: OrchestrateEnvironment(["ORCHESTRATE_MOCK_URL": upstream.url]), control: runner.control)
        let result = await runner.run(pickle, world: app)
        await upstream.stop()
        #expect(result.steps.map(\.status) == [.passed, .passed, .failed, .skipped])
        #expect(result.failure?.error?.contains("expected 2 notes on screen") == true, "\(lines.withLock { $0 })")
        #expect(lines.withLock { $0 }.contains { $0.hasPrefix("  skipped") })
    }

    @Test("no pickle, unreadable pickles and step definitions that do not compile exit with 2")
    func badInput() async throws {
        let lines = Mutex<[String]>([])
        var runner = ScenarioRunner(
            steps: Self.steps(), control: OrchestrateControl(environment: OrchestrateEnvironment([:])))
        runner.output = { line in lines.withLock { $0.append(line) } }
        #expect(await runner.main(arguments: []) { NotesApp(environment: OrchestrateEnvironment([:])) } == 2)
        #expect(
            await runner.main(arguments: ["/nonexistent/pickles.ndjson"]) {
                NotesApp(environment: OrchestrateEnvironment([:]))
            } == 2)
        var broken = Self.steps()
        broken.given("a {colour} car") { _, _ in }
        runner = ScenarioRunner(steps: broken, control: runner.control)
        runner.output = { line in lines.withLock { $0.append(line) } }
        #expect(await runner.main(arguments: []) { NotesApp(environment: OrchestrateEnvironment([:])) } == 2)
        let output = lines.withLock { $0 }.joined(separator: "\n")
        #expect(output.contains("no scenario: run this under orchestrate"))
        #expect(output.contains("/nonexistent/pickles.ndjson: no such file"))
        #expect(output.contains("ScenarioRunnerTests.swift:") && output.contains("there is no parameter type {colour}"))
    }
}

extension ScenarioRunnerTests {
    @Test("a step two definitions match is ambiguous, and the message names both")
    func ambiguousSteps() async throws {
        var steps = Self.steps()
        steps.given(regex: "a new (user|patient) signs up") { _, _ in }
        var runner = ScenarioRunner(steps: steps, control: OrchestrateControl(environment: OrchestrateEnvironment([:])))
        runner.output = { _ in }
        let result = await runner.run(
            try Pickle(json: Self.pickle), world: NotesApp(environment: OrchestrateEnvironment([:])))
        #expect(result.steps.map(\.status) == [.ambiguous, .skipped, .skipped, .skipped])
        let message = try #require(result.failure?.error)
        #expect(
            message.contains(
                #""a new user signs up" matches 2 step definitions: "a new user signs up" (OrchestrateKitTests/ScenarioRunnerTests.swift:"#
            ))
        #expect(message.contains(#""a new (user|patient) signs up" (OrchestrateKitTests/ScenarioRunnerTests.swift:"#))
    }
}
