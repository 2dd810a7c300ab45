import AsyncHTTPClient
import Foundation
import Logging
import MockServer
import NIOCore
import NIOHTTP1
import OrchestrateModel
import OrchestrateTesting
import Synchronization
import Testing

/// A stub from its JSON form, as the control API and the configuration give it.
func stub(_ json: String) throws -> Stub {
    try Stub(JSONDecoder().decode(JSONValue.self, from: Data(json.utf8)))
}

@Suite("Mock server stubs and modes", .timeLimit(.minutes(1)))
struct StubTests {
    @Test("static and templated answers: path parameters, query, JSON body fields, seed and the frozen clock")
    func templates() async throws {
        try await withMockServer(
            hosts: [:],
            configure: { configuration in
                configuration.stubs = [
                    try stub(
                        #"{"request": {"method": "GET", "host": "api.test", "path": "/v1/slots/{day}"},"#
                            + #" "response": {"json": {"day": "{{request.params.day}}", "lang": "{{request.query.lang}}", "now": "{{now}}", "seed": "{{seed}}"}, "template": true}}"#
                    ),
                    try stub(
                        #"{"request": {"method": "POST", "path": "/v1/echo"}, "response": {"status": 201, "body": "hi {{request.body.user.name}}, call {{call}}", "template": true}}"#
                    ),
                    try stub(
                        #"{"request": {"path": "/v1/static"}, "response": {"status": 418, "headers": {"x-kind": "teapot"}, "body": "short and stout"}}"#
                    ),
                ]
            }
        ) { server, client in
            try server.begin(MockSession(mode: .mock, seed: 42, now: "2026-01-02T03:04:05Z"))
            let slots = try await client.send(.GET, "/api.test/v1/slots/mon%20day?lang=fr")
            #expect(slots.status == 200 && slots.headers["content-type"] == "application/json")
            let json = try slots.json()
            #expect(json["day"] as? String == "mon day" && json["lang"] as? String == "fr")
            #expect(json["now"] as? String == "2026-01-02T03:04:05Z" && json["seed"] as? String == "42")
            let echo = try await client.send(.POST, "/any.host/v1/echo", body: #"{"user": {"name": "Ann \"A\""}}"#)
            #expect(echo.status == 201 && echo.body == #"hi Ann "A", call 1"#)
            let again = try await client.send(.POST, "/any.host/v1/echo", body: #"{"user": {"name": "Bo"}}"#)
            #expect(again.body == "hi Bo, call 2")
            let teapot = try await client.send(.GET, "/api.test/v1/static")
            #expect(teapot.status == 418 && teapot.headers["x-kind"] == "teapot" && teapot.body == "short and stout")
            let none = try await client.send(.GET, "/api.test/v1/nothing")
            #expect(none.status == 404 && none.body.contains("no stub answers GET /api.test/v1/nothing"))
            try server.end()
        }
    }

    @Test("a sequence answers the nth call with the nth response, then repeats the last; a delay holds the answer")
    func sequenceAndDelay() async throws {
        try await withMockServer(
            hosts: [:],
            configure: { configuration in
                configuration.stubs = [
                    try stub(
                        #"{"request": {"path": "/pay"}, "responses": [{"status": 500}, {"status": 503}, {"status": 200, "body": "paid"}]}"#
                    ),
                    try stub(#"{"request": {"path": "/slow"}, "response": {"body": "late", "delay": "400ms"}}"#),
                ]
            }
        ) { server, client in
            try server.begin(MockSession(mode: .mock))
            var statuses: [Int] = []
            for _ in 0..<4 { statuses.append(try await client.send(.POST, "/api.test/pay").status) }
            #expect(statuses == [500, 503, 200, 200])
            let clock = ContinuousClock.now
            let slow = try await client.send(.GET, "/api.test/slow")
            #expect(slow.body == "late" && ContinuousClock.now - clock >= .milliseconds(400))
            // A new session starts the sequence again.
            try server.end()
            try server.begin(MockSession(mode: .mock))
            #expect(try await client.send(.POST, "/api.test/pay").status == 500)
            try server.end()
        }
    }

    @Test(
        "pipelined requests are answered in the order they came, also when the first one is slow, and after a dribbled body"
    )
    func pipelinedInOrder() async throws {
        try await withMockServer(
            hosts: [:],
            configure: { configuration in
                configuration.stubs = [
                    try stub(#"{"request": {"path": "/slow"}, "response": {"body": "late", "delay": "300ms"}}"#),
                    try stub(#"{"request": {"path": "/fast"}, "response": {"body": "quick"}}"#),
                    try stub(
                        #"{"request": {"path": "/drip"}, "response": {"body": "0123456789", "fault": "dribble"}}"#),
                ]
            }
        ) { server, _ in
            try server.begin(MockSession(mode: .mock))
            let request = { (path: String, last: Bool) in
                "GET /api.test/\(path) HTTP/1.1\r\nHost: x\r\n\(last ? "Connection: close\r\n" : "")\r\n"
            }
            let text = try await RawSocket.exchange(
                port: server.port!,
                send: request("slow", false) + request("fast", false) + request("drip", false) + request("fast", true)
            )
            // Each body ends its response: the next status line follows it directly.
            let bodies = text.components(separatedBy: "HTTP/1.1 200 OK").dropFirst().map {
                $0.components(separatedBy: "\r\n\r\n").last ?? ""
            }
            #expect(bodies == ["late", "quick", "0123456789", "quick"])
            try server.end()
        }
    }

    @Test("a collection keeps state: create, read, update, delete by id, and set through the control API")
    func collection() async throws {
        try await withMockServer(
            hosts: [:],
            configure: { configuration in
                configuration.stubs = [
                    try stub(
                        #"{"request": {"host": "api.clinic.test", "path": "/v1/appointments"}, "collection": {"name": "appointments", "items": [{"id": 1, "day": "mon"}]}}"#
                    )
                ]
            }
        ) { server, client in
            try server.begin(MockSession(mode: .mock))
            let created = try await client.send(.POST, "/api.clinic.test/v1/appointments", body: #"{"day": "tue"}"#)
            #expect(try created.status == 201 && created.json()["id"] as? Int == 2)
            let patched = try await client.send(
                .PATCH, "/api.clinic.test/v1/appointments/2", body: #"{"time": "10:00"}"#)
            #expect(try patched.json()["day"] as? String == "tue" && patched.json()["time"] as? String == "10:00")
            #expect(try await client.send(.DELETE, "/api.clinic.test/v1/appointments/1").status == 204)
            #expect(try await client.send(.GET, "/api.clinic.test/v1/appointments/1").status == 404)
            let list = try await client.send(.GET, "/api.clinic.test/v1/appointments")
            #expect(list.body == #"[{"day":"tue","id":2,"time":"10:00"}]"#)
            // "Configure the backend to be in a state" from the test.
            let put = try await client.send(
                .PUT, "/__orchestrate/collections/appointments", body: #"[{"id": "a", "day": "fri"}]"#)
            #expect(put.status == 200)
            #expect(try await client.send(.GET, "/api.clinic.test/v1/appointments/a").status == 200)
            #expect(
                try await client.send(.GET, "/__orchestrate/collections/appointments").body
                    == #"[{"day":"fri","id":"a"}]"#)
            try server.end()
        }
    }

    @Test("stubs added through the control API answer first in every mode; bad stubs are refused with the reason")
    func runtimeStubs() async throws {
        try await TemporaryDirectory.with { directory in
            try await TestUpstream.with { upstream in
                let cassette = directory.file("c.har")
                try await withMockServer(hosts: ["api.test": upstream.url]) { server, client in
                    try server.begin(MockSession(mode: .record, cassettePath: cassette))
                    _ = try await client.send(.GET, "/api.test/v1/profile")
                    try server.end()
                    try server.begin(MockSession(mode: .replay, cassettePath: cassette))
                    let added = try await client.send(
                        .POST, "/__orchestrate/stubs",
                        body: #"[{"name": "down", "request": {"path": "/v1/profile"}, "response": {"status": 503}}]"#)
                    #expect(added.status == 201)
                    #expect(try await client.send(.GET, "/api.test/v1/profile").status == 503)
                    let bad = try await client.send(
                        .POST, "/__orchestrate/stubs", body: #"{"request": {"path": "x"}, "response": {"stauts": 1}}"#)
                    #expect(bad.status == 400 && bad.body.contains("request.path"))
                    let badKey = try await client.send(
                        .POST, "/__orchestrate/stubs", body: #"{"response": {"stauts": 1}}"#)
                    #expect(badKey.status == 400 && badKey.body.contains("response.stauts: unknown key"))
                    #expect(try await client.send(.DELETE, "/__orchestrate/stubs?name=down").body == #"{"removed":1}"#)
                    #expect(try await client.send(.GET, "/api.test/v1/profile").status == 200)  // the recording again
                    try server.end()
                }
            }
        }
    }

    @Test("hybrid: stubs first, then the recording; without one, the live backend")
    func hybrid() async throws {
        try await TemporaryDirectory.with { directory in
            try await TestUpstream.with { upstream in
                let cassette = directory.file("h.har")
                try await withMockServer(
                    hosts: ["api.test": upstream.url],
                    configure: { configuration in
                        configuration.stubs = [
                            try stub(#"{"request": {"path": "/v1/flags"}, "response": {"json": {"beta": true}}}"#)
                        ]
                    }
                ) { server, client in
                    try server.begin(MockSession(mode: .hybrid, cassettePath: directory.file("none.har")))
                    #expect(try await client.send(.GET, "/api.test/v1/flags").body == #"{"beta":true}"#)
                    #expect(
                        try await client.send(.GET, "/api.test/v1/live").json()["upstream"] as? String == "upstream")
                    try server.end()
                    try server.begin(MockSession(mode: .record, cassettePath: cassette))
                    let recorded = try await client.send(.GET, "/api.test/v1/items")
                    try server.end()
                    let hits = upstream.hits.withLock { $0 }
                    try server.begin(MockSession(mode: .hybrid, cassettePath: cassette))
                    #expect(try await client.send(.GET, "/api.test/v1/items").body == recorded.body)
                    #expect(try await client.send(.GET, "/api.test/v1/flags").body == #"{"beta":true}"#)
                    #expect(upstream.hits.withLock { $0 } == hits)
                    try server.end()
                }
            }
        }
    }
}

@Suite("JSON paths naming a value")
struct JSONPathNamesTests {
    @Test("a pattern names a concrete path it matches, or one inside a value it names")
    func names() throws {
        let items = try JSONPath("$.items[*].at")
        #expect(items.names("$.items[3].at") && !items.names("$.items[3].id") && !items.names("$.other[0].at"))
        #expect(try JSONPath("$..at").names("$.a.b[2].at") && !(try JSONPath("$..at").names("$.a.b[2].att")))
        #expect(try JSONPath("$.meta").names("$.meta.request.id"))
        #expect(!(try JSONPath("$.meta.id").names("$.meta")))
        #expect(!items.names("not a path"))
        // Quoted names as differences write them (JSONDiff): `]` inside, and escaped quotes and backslashes.
        #expect(try JSONPath("$['a]b']").names("$['a]b'].c"))
        #expect(try JSONPath(#"$['it\'s']"#).names(#"$['it\'s']"#) && !(try JSONPath(#"$['it\'s']"#).names("$.its")))
        #expect(try JSONPath(#"$["back\\slash"]"#).names(#"$['back\\slash']"#))
        #expect(throws: (any Error).self) { try JSONPath("$['open") }
    }
}
