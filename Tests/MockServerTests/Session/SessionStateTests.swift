import Foundation
import MockServer
import OrchestrateModel
import Testing

/// The mock server's decision for each request, made from the session alone: no socket, no upstream.
@Suite("Mock session: what answers a request")
struct SessionStateTests {
    static let configuration: MockConfiguration = {
        var configuration = MockConfiguration()
        configuration.hosts = ["api.test": "https://api.example.com"]
        configuration.maximumBodyBytes = 1024
        return configuration
    }()

    static func request(_ uri: String, method: String = "GET", body: String = "") -> MockRequest {
        MockRequest(method: method, uri: uri, headers: [], body: Array(body.utf8))
    }

    /// A cassette of GET /v1/items answered 200 "first" then 200 "second", and POST /v1/orders answered 201.
    static func cassette() -> Cassette {
        var cassette = Cassette(
            path: "/recordings/items.har", extras: CassetteExtras(seed: 42, now: "2026-01-02T03:04:05Z"))
        let entries = [
            ("GET", "/v1/items", 200, "first"), ("GET", "/v1/items", 200, "second"),
            ("POST", "/v1/orders", 201, "made"),
        ]
        cassette.har.log.entries = entries.enumerated().map { index, entry in
            HAR.Entry(
                Exchange(
                    sequence: index + 1, mode: .record, matched: true, host: "api.test", method: entry.0,
                    url: "https://api.example.com\(entry.1)",
                    requestHeaders: [], requestBody: [], status: entry.2,
                    responseHeaders: [.init(name: "content-type", value: "text/plain")],
                    responseBody: Array(entry.3.utf8), startedAt: Date(), durationMicroseconds: 1000
                ))
        }
        return cassette
    }

    static func replaying(repeatLast: Bool = true) -> SessionState {
        var configuration = configuration
        configuration.repeatLast = repeatLast
        return SessionState(
            session: MockSession(mode: .replay, attemptID: 7), replaying: cassette(), configuration: configuration)
    }

    /// The decision's kind and, for answers, the body.
    static func describe(_ decision: RequestDecision) -> String {
        switch decision.action {
        case .tooLarge(let limit): "too large \(limit)"
        case .stub(let response): "stub \(String(decoding: response.body, as: UTF8.self))"
        case .replay(let index, let response, _): "replay \(index) \(String(decoding: response.body, as: UTF8.self))"
        case .forward(let upstream): "forward \(upstream)"
        case .unmatched(let miss): "unmatched \(miss.closest ?? "-")"
        case .noCassette(let path): "no cassette \(path)"
        case .noStub: "no stub"
        case .refuse: "refuse"
        case .noSession: "no session"
        }
    }

    static func decide(_ state: inout SessionState, _ request: MockRequest, tooLarge: Bool = false) -> String {
        describe(state.decide(request, stored: request, bodyTooLarge: tooLarge))
    }

    @Test("replay answers identical requests in recorded order, then repeats the last (or refuses, when told to)")
    func replayOrder() {
        var state = Self.replaying()
        #expect(
            state.session.seed == 42 && state.session.now == "2026-01-02T03:04:05Z", "the recording's seed and clock")
        #expect(Self.decide(&state, Self.request("/api.test/v1/items")) == "replay 0 first")
        #expect(Self.decide(&state, Self.request("/api.test/v1/items")) == "replay 1 second")
        #expect(Self.decide(&state, Self.request("/api.test/v1/items")) == "replay 1 second")
        #expect(Self.decide(&state, Self.request("/api.test/v1/orders", method: "POST")) == "replay 2 made")
        var strict = Self.replaying(repeatLast: false)
        _ = Self.decide(&strict, Self.request("/api.test/v1/orders", method: "POST"))
        #expect(
            Self.decide(&strict, Self.request("/api.test/v1/orders", method: "POST"))
                == "unmatched POST https://api.example.com/v1/orders")
    }

    @Test(
        "replay: an unmatched request gets the closest recording, an unknown host a refusal, no cassette says where it was expected"
    )
    func replayMisses() {
        var state = Self.replaying()
        #expect(
            Self.decide(&state, Self.request("/api.test/v1/items", method: "DELETE"))
                == "unmatched GET https://api.example.com/v1/items")
        #expect(Self.decide(&state, Self.request("/elsewhere.test/v1/items")) == "refuse")
        #expect(Self.decide(&state, Self.request("/")) == "refuse")
        var missing = SessionState(
            session: MockSession(mode: .replay), missingCassette: "/recordings/none.har",
            configuration: Self.configuration)
        #expect(Self.decide(&missing, Self.request("/api.test/v1/items")) == "no cassette /recordings/none.har")
        var none = SessionState(configuration: Self.configuration)
        #expect(Self.decide(&none, Self.request("/api.test/v1/items")) == "no session", "a request between attempts")
    }

    @Test("record, live and hybrid without a recording forward to the configured upstream only")
    func forwarding() {
        for mode in [Mode.record, .live] {
            var state = SessionState(
                session: MockSession(mode: mode, cassettePath: "/recordings/new.har"), configuration: Self.configuration
            )
            #expect(
                Self.decide(&state, Self.request("/api.test/v1/items")) == "forward https://api.example.com", "\(mode)")
            #expect(Self.decide(&state, Self.request("/evil.test/steal")) == "refuse", "\(mode)")
        }
        var hybrid = SessionState(session: MockSession(mode: .hybrid), configuration: Self.configuration)
        #expect(Self.decide(&hybrid, Self.request("/api.test/v1/items")) == "forward https://api.example.com")
        var hybridWithRecording = SessionState(
            session: MockSession(mode: .hybrid), replaying: Self.cassette(), configuration: Self.configuration)
        #expect(Self.decide(&hybridWithRecording, Self.request("/api.test/v1/items")) == "replay 0 first")
    }

    @Test(
        "stubs: configured ones answer in mock and hybrid mode, those added at run time first in every mode; nth call, nth answer"
    )
    func stubs() throws {
        var configuration = Self.configuration
        configuration.stubs = [
            try Stub(
                .object([
                    "request": .object(["path": .string("/v1/items")]),
                    "responses": .array([
                        .object(["status": .integer(500), "body": .string("down")]), .object(["body": .string("up")]),
                    ]),
                ]))
        ]
        var mock = SessionState(session: MockSession(mode: .mock), configuration: configuration)
        #expect(Self.decide(&mock, Self.request("/api.test/v1/items")) == "stub down")
        #expect(Self.decide(&mock, Self.request("/api.test/v1/items")) == "stub up")
        #expect(Self.decide(&mock, Self.request("/api.test/v1/other")) == "no stub")
        #expect(
            Self.decide(&mock, Self.request("/unknown.test/v1/other")) == "no stub", "mock mode: no stub, not a refusal"
        )
        var replay = SessionState(
            session: MockSession(mode: .replay), replaying: Self.cassette(), configuration: configuration)
        #expect(
            Self.decide(&replay, Self.request("/api.test/v1/items")) == "replay 0 first",
            "configured stubs do not answer in replay")
        replay.stubs.add([
            try Stub(
                .object([
                    "request": .object(["path": .string("/v1/items")]),
                    "response": .object(["body": .string("runtime")]),
                ]))
        ])
        #expect(Self.decide(&replay, Self.request("/api.test/v1/items")) == "stub runtime")
    }

    @Test(
        "a body past the limit is refused before anything else; each exchange gets the next number and the step open when it came"
    )
    func placeAndLimit() {
        var state = Self.replaying()
        let items = Self.request("/api.test/v1/items")
        let first = state.decide(items, stored: items, bodyTooLarge: false)
        _ = state.report(StepReport(keyword: "Given ", name: "a step"), at: Date())
        let orders = Self.request("/api.test/v1/orders", method: "POST")
        let second = state.decide(orders, stored: orders, bodyTooLarge: true)
        #expect(Self.describe(second) == "too large 1024")
        #expect((first.sequence, first.step, second.sequence, second.step) == (1, nil, 2, 1))
        #expect(second.session.attemptID == 7)
    }

    @Test(
        "steps: a start opens one, a status ends it, a new start ends an open one unfinished, a named step with its end comes whole"
    )
    func steps() {
        var state = SessionState(configuration: Self.configuration)
        let t0 = Date(timeIntervalSince1970: 1000)
        #expect(state.report(StepReport(keyword: "Given ", name: "one"), at: t0).position == 1)
        let ended = state.report(StepReport(status: "passed"), at: t0.addingTimeInterval(1))
        #expect(
            ended.ended?.status == "passed" && ended.ended?.finishedAt == t0.addingTimeInterval(1)
                && ended.position == 1)
        _ = state.report(StepReport(keyword: "When ", name: "two"), at: t0.addingTimeInterval(2))
        let third = state.report(StepReport(keyword: "Then ", name: "three"), at: t0.addingTimeInterval(3))
        #expect(third.ended?.name == "two" && third.ended?.status == "unfinished" && third.position == 3)
        let whole = state.report(
            StepReport(name: "whole", startedAt: t0, finishedAt: t0.addingTimeInterval(5)), at: t0.addingTimeInterval(6)
        )
        #expect(
            whole.ended?.status == "passed" && whole.position == 4,
            "named, with its end: a step of its own; three stays open")
        #expect(state.steps.map(\.status) == ["passed", "unfinished", "started", "passed"])
    }

    @Test("recorded randoms: kept in record and live, the recording's given back in replay")
    func randoms() {
        var live = SessionState(session: MockSession(mode: .live), configuration: Self.configuration)
        #expect(
            live.random("email", proposed: "a@x.test") == ("a@x.test", false) && live.randoms["email"] == "a@x.test")
        var cassette = Self.cassette()
        cassette.har.log.orchestrate?.randoms = ["email": "recorded@x.test"]
        var replay = SessionState(
            session: MockSession(mode: .replay), replaying: cassette, configuration: Self.configuration)
        #expect(replay.random("email", proposed: "new@x.test") == ("recorded@x.test", true))
        #expect(replay.random("other", proposed: "fresh") == ("fresh", false))
    }
}
