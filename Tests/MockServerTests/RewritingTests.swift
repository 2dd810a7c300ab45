import AsyncHTTPClient
import CompressNIO
import Foundation
import Logging
import MockServer
import NIOCore
import NIOHTTP1
import OrchestrateModel
import OrchestrateTesting
import Synchronization
import Testing

@Suite("Mock server rewriting, matching, redaction and steps", .timeLimit(.minutes(1)))
struct RewritingTests {
    @Test("URLs of configured hosts become mock URLs in bodies and headers; other hosts, and URLs inside them, stay")
    func rewriting() async throws {
        try await TestUpstream.with { upstream in
            try await withMockServer(hosts: ["api.test": upstream.url]) { server, client in
                try server.begin(MockSession(mode: .live))
                let mock = client.base + "/api.test"
                for query in ["", "?chunked=1"] {
                    let response = try await client.send(.GET, "/api.test/v1/links\(query)")
                    let json = try response.json()
                    #expect(json["self"] as? String == "\(mock)/v1/items/1")
                    #expect(json["next"] as? String == "\(mock)/v1/items?page=2")
                    #expect(json["other"] as? String == "https://cdn.example/img?src=\(upstream.url)/v1/x")
                    #expect(json["escaped"] as? String == "\(mock)/v1/e")  // written as http:\/\/… and kept that way
                    #expect(response.body.contains(#"\/api.test\/v1\/e"#))
                    #expect(json["text"] as? String == "see \(mock)/help.")
                    #expect(json["lookalike"] as? String == "\(upstream.url)0/v1/no")  // another port is another host
                    #expect(response.headers["location"] == "\(mock)/v1/items/2")
                    #expect(response.headers["link"] == "<\(mock)/v1/items?page=3>; rel=\"next\"")
                    #expect(response.headers["content-length"] == "\(response.body.utf8.count)")
                    #expect(response.headers["transfer-encoding"] == nil)
                }
                try server.end()
            }
        }
    }

    @Test(
        "gzip bodies are decoded for rewriting and sent gzip again with a matching Content-Length; br is not asked for")
    func gzip() async throws {
        try await TestUpstream.with { upstream in
            try await withMockServer(hosts: ["api.test": upstream.url]) { server, client in
                try server.begin(MockSession(mode: .live))
                let (status, headers, bytes) = try await client.sendBytes(
                    .GET, "/api.test/v1/links?gzip=1", headers: [("accept-encoding", "br, gzip")])
                #expect(
                    status == 200 && headers["content-encoding"] == "gzip"
                        && headers["content-length"] == "\(bytes.count)")
                var buffer = ByteBuffer(bytes: bytes)
                let text = String(buffer: try buffer.decompress(with: .gzip()))
                #expect(text.contains("\"self\":\"\(client.base)/api.test/v1/items/1\""))
                let echo = try await client.send(
                    .GET, "/api.test/v1/echo", headers: [("accept-encoding", "br, gzip;q=0.8")])
                #expect(try echo.json()["acceptEncoding"] as? String == "gzip;q=0.8")
                try server.end()
            }
        }
    }

    @Test("chosen headers take part in matching; ignored JSON fields do not")
    func matching() async throws {
        try await TemporaryDirectory.with { directory in
            try await TestUpstream.with { upstream in
                let cassette = directory.file("m.har")
                try await withMockServer(
                    hosts: ["api.test": upstream.url],
                    configure: { configuration in
                        configuration.matchHeaders = ["accept-language"]
                        configuration.ignoredJSON = [try JSONPath("$.requestId"), try JSONPath("$.items[*].at")]
                    }
                ) { server, client in
                    try server.begin(MockSession(mode: .record, cassettePath: cassette))
                    let english = try await client.send(
                        .GET, "/api.test/v1/greeting", headers: [("accept-language", "en")])
                    let french = try await client.send(
                        .GET, "/api.test/v1/greeting", headers: [("accept-language", "fr")])
                    let order = try await client.send(
                        .POST, "/api.test/v1/order", body: #"{"requestId": "r1", "items": [{"sku": 1, "at": "t1"}]}"#)
                    try server.end()
                    try server.begin(MockSession(mode: .replay, cassettePath: cassette))
                    #expect(
                        try await client.send(.GET, "/api.test/v1/greeting", headers: [("accept-language", "fr")]).body
                            == french.body)
                    #expect(
                        try await client.send(.GET, "/api.test/v1/greeting", headers: [("accept-language", "en")]).body
                            == english.body)
                    let miss = try await client.send(
                        .GET, "/api.test/v1/greeting", headers: [("accept-language", "de")])
                    #expect(miss.status == 404 && miss.body.contains("header accept-language: de vs"))
                    let replayed = try await client.send(
                        .POST, "/api.test/v1/order", body: #"{"items": [{"at": "t2", "sku": 1}], "requestId": "r2"}"#)
                    #expect(replayed.body == order.body)
                    let other = try await client.send(
                        .POST, "/api.test/v1/order", body: #"{"requestId": "r1", "items": [{"sku": 2, "at": "t1"}]}"#)
                    #expect(other.status == 404)
                    try server.end()
                }
            }
        }
    }

    @Test(
        "steps from the control API: exchanges name the step open when they arrived; steps are reported when they end")
    func steps() async throws {
        try await withMockServer(
            hosts: [:],
            configure: { configuration in
                configuration.stubs = [try stub(#"{"request": {"path": "/x"}, "response": {"body": "x"}}"#)]
            }
        ) { server, client in
            try server.begin(MockSession(mode: .mock, attemptID: 9))
            _ = try await client.send(.GET, "/api.test/x")
            #expect(
                try await client.send(
                    .POST, "/__orchestrate/steps", body: #"{"keyword": "Given ", "name": "I open the app"}"#
                ).status == 201)
            _ = try await client.send(.GET, "/api.test/x")
            _ = try await client.send(.POST, "/__orchestrate/steps", body: #"{"status": "passed"}"#)
            // A whole step, reported after the fact, leaves no step open.
            _ = try await client.send(
                .POST, "/__orchestrate/steps",
                body: #"{"name": "a check", "startedAt": "2026-01-01T00:00:00Z", "finishedAt": "2026-01-01T00:00:01Z"}"#
            )
            _ = try await client.send(.POST, "/__orchestrate/steps", body: #"{"keyword": "When ", "name": "I book"}"#)
            _ = try await client.send(.GET, "/api.test/x")
            try server.end()
            var exchanges: [Exchange] = []
            var steps: [Step] = []
            for await event in server.events {
                switch event {
                case .exchange(let exchange): exchanges.append(exchange)
                case .step(let step, let attemptID):
                    #expect(attemptID == 9)
                    steps.append(step)
                }
                if steps.count == 3 { break }
            }
            #expect(exchanges.map(\.stepPosition) == [nil, 1, 3])
            #expect(steps.map(\.name) == ["I open the app", "a check", "I book"])
            #expect(steps.map(\.status) == ["passed", "passed", "unfinished"])
            #expect(steps[0].keyword == "Given " && steps[0].finishedAt != nil)
        }
    }

    @Test("recorded randoms: kept in record mode, given back in replay")
    func randoms() async throws {
        try await TemporaryDirectory.with { directory in
            let cassette = directory.file("r.har")
            try await withMockServer(hosts: [:]) { server, client in
                try server.begin(MockSession(mode: .record, cassettePath: cassette))
                let kept = try await client.send(
                    .POST, "/__orchestrate/randoms", body: #"{"key": "email", "value": "a1@mail.test"}"#)
                #expect(try kept.json()["value"] as? String == "a1@mail.test")
                try server.end()
                try server.begin(MockSession(mode: .replay, cassettePath: cassette))
                let replayed = try await client.send(
                    .POST, "/__orchestrate/randoms", body: #"{"key": "email", "value": "zz@mail.test"}"#)
                #expect(
                    try replayed.json()["value"] as? String == "a1@mail.test"
                        && replayed.json()["replayed"] as? Bool == true)
                try server.end()
            }
        }
    }
}
