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

#if canImport(Glibc)
import Glibc
#endif

/// A response as a client saw it.
struct Seen: Equatable {
    var status: Int
    var headers: [String: String]
    var body: String

    func json() throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
    }
}

/// A started mock server and a client for it; both shut down at the end, also on failure.
func withMockServer<T>(
    hosts: [String: String], configure: (inout MockConfiguration) throws -> Void = { _ in },
    _ body: (MockServer, MockClient) async throws -> T
) async throws -> T {
    var configuration = MockConfiguration()
    configuration.hosts = hosts
    try configure(&configuration)
    let server = MockServer(configuration: configuration, logger: Logger(label: "mock-test"))
    let client = MockClient()
    do {
        try await server.start(port: 0)
        client.base = "http://127.0.0.1:\(server.port!)"
        let result = try await body(server, client)
        await server.shutdown()
        try await client.http.shutdown()
        return result
    } catch {
        await server.shutdown()
        try? await client.http.shutdown()
        throw error
    }
}

extension MockServer {
    /// The next `count` exchanges the server reports (steps are skipped).
    func nextExchanges(_ count: Int) async -> [Exchange] {
        var exchanges: [Exchange] = []
        guard count > 0 else { return [] }
        for await event in events {
            if case .exchange(let exchange) = event { exchanges.append(exchange) }
            if exchanges.count == count { break }
        }
        return exchanges
    }
}

final class MockClient: @unchecked Sendable {
    let http = HTTPClient(eventLoopGroupProvider: .singleton)
    var base = ""

    func send(
        _ method: HTTPMethod = .GET, _ path: String, body: String? = nil, headers: [(String, String)] = []
    ) async throws -> Seen {
        let (status, seen, bytes) = try await sendBytes(method, path, body: body, headers: headers)
        return Seen(status: status, headers: seen, body: String(decoding: bytes, as: UTF8.self))
    }

    func sendBytes(
        _ method: HTTPMethod = .GET, _ path: String, body: String? = nil, headers: [(String, String)] = []
    ) async throws -> (Int, [String: String], [UInt8]) {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(string: body)) }
        let response = try await http.execute(request, timeout: .seconds(10))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        var seen: [String: String] = [:]
        for header in response.headers { seen[header.name.lowercased()] = header.value }
        return (Int(response.status.code), seen, Array(buffer: bytes))
    }
}

@Suite("Mock server", .timeLimit(.minutes(1)))
struct MockServerTests {
    @Test("record then replay gives the same status, headers and body with the upstream stopped")
    func recordReplay() async throws {
        try await TemporaryDirectory.with { directory in
            let upstream = try await TestUpstream.start()
            let cassette = directory.file("Recordings/checkout.har")
            try await withMockServer(hosts: ["api.shop.test": upstream.url]) { server, client in
                try server.begin(MockSession(mode: .record, cassettePath: cassette, scenarioID: "checkout", seed: 7))
                let recorded = [
                    try await client.send(.GET, "/api.shop.test/v1/items?b=2&a=1"),
                    try await client.send(
                        .POST, "/api.shop.test/v1/cart", body: #"{"item": 3, "count": 1}"#,
                        headers: [("content-type", "application/json"), ("authorization", "Bearer s3cret")]),
                    try await client.send(.GET, "/api.shop.test/v1/missing"),
                ]
                #expect(recorded.map(\.status) == [200, 200, 404])
                #expect(try recorded[1].json()["authorized"] as? Bool == true)  // forwarded as sent
                try server.end()
                await upstream.stop()
                let hitsAfterRecording = upstream.hits.withLock { $0 }

                // The cassette is HAR 1.2 with orchestrate's extras, and no secret in it.
                let text = try String(contentsOfFile: cassette, encoding: .utf8)
                #expect(!text.contains("s3cret") && !text.contains("secret-"))
                let har = try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
                let log = try #require(har["log"] as? [String: Any])
                #expect(log["version"] as? String == "1.2")
                #expect((log["entries"] as? [Any])?.count == 3)
                #expect((log["_orchestrate"] as? [String: Any])?["seed"] as? Int == 7)

                try server.begin(MockSession(mode: .replay, cassettePath: cassette, scenarioID: "checkout"))
                let replayed = [
                    try await client.send(.GET, "/api.shop.test/v1/items?a=1&b=2"),  // query order does not matter
                    try await client.send(
                        .POST, "/api.shop.test/v1/cart", body: #"{"count":1,"item":3}"#,  // nor JSON key order
                        headers: [("content-type", "application/json")]),
                    try await client.send(.GET, "/api.shop.test/v1/missing"),
                ]
                for (recorded, replayed) in zip(recorded, replayed) {
                    #expect(replayed.status == recorded.status)
                    #expect(replayed.body == recorded.body)
                    #expect(replayed.headers["x-upstream"] == recorded.headers["x-upstream"])
                    #expect(replayed.headers["content-type"] == recorded.headers["content-type"])
                    #expect(replayed.headers["content-length"] == recorded.headers["content-length"])
                }
                #expect(upstream.hits.withLock { $0 } == hitsAfterRecording)
                try server.end()
            }
        }
    }

    @Test(
        "a mock URI names the host first, then the path and query as sent",
        arguments: [
            ("get", "/API.Example.com/v1/x?b=2&a=1", "GET", "api.example.com", "/v1/x", "b=2&a=1"),
            ("POST", "/api.example.com", "POST", "api.example.com", "/", ""),
            ("GET", "/api.example.com/?", "GET", "api.example.com", "/", ""),
            ("GET", "//h.test//p?q=/x?y", "GET", "h.test", "//p", "q=/x?y"),
            ("GET", "/", "GET", "", "/", ""),
            ("GET", "/?only=query", "GET", "", "/", "only=query"),
            ("GET", "/h.test/ü/é%20x?q=ä", "GET", "h.test", "/ü/é%20x", "q=ä"),
        ])
    func mockURI(method: String, uri: String, expectedMethod: String, host: String, path: String, query: String) {
        let request = MockRequest(method: method, uri: uri, headers: [], body: [])
        #expect(request.method == expectedMethod)
        #expect(request.host == host)
        #expect(request.path == path)
        #expect(request.rawQuery == query)
    }

    @Test("one port serves many hosts; a host that is not configured gets 403 naming mock.hosts")
    func multiHost() async throws {
        try await TestUpstream.with(name: "one") { one in
            try await TestUpstream.with(name: "two") { two in
                try await withMockServer(hosts: ["api.one.test": one.url, "api.two.test": two.url + "/base"]) {
                    server, client in
                    try server.begin(MockSession(mode: .live))
                    let first = try await client.send(.GET, "/api.one.test/ping?x=1")
                    let second = try await client.send(.GET, "/api.two.test/ping")
                    #expect(try first.json()["upstream"] as? String == "one")
                    #expect(try first.json()["query"] as? String == "x=1")
                    #expect(try second.json()["upstream"] as? String == "two")
                    #expect(try second.json()["path"] as? String == "/base/ping")
                    let refused = try await client.send(.GET, "/evil.example.com/steal")
                    #expect(refused.status == 403)
                    #expect(refused.body.contains("mock.hosts") && refused.body.contains("evil.example.com"))
                    #expect(one.hits.withLock { $0 } == 1 && two.hits.withLock { $0 } == 1)
                    try server.end()
                }
            }
        }
    }

    @Test("identical requests replay in recorded order, then the last repeats")
    func repeatedRequests() async throws {
        try await TemporaryDirectory.with { directory in
            try await TestUpstream.with { upstream in
                let cassette = directory.file("poll.har")
                try await withMockServer(hosts: ["api.test": upstream.url]) { server, client in
                    try server.begin(MockSession(mode: .record, cassettePath: cassette))
                    for _ in 1...3 { _ = try await client.send(.GET, "/api.test/status") }
                    try server.end()
                    try server.begin(MockSession(mode: .replay, cassettePath: cassette))
                    var hits: [Int] = []
                    for _ in 1...4 {
                        hits.append(try await client.send(.GET, "/api.test/status").json()["hit"] as? Int ?? 0)
                    }
                    #expect(hits == [1, 2, 3, 3])
                    try server.end()
                }
            }
        }
    }

    @Test("an unmatched request in replay names the closest recording and what differs")
    func nearMiss() async throws {
        try await TemporaryDirectory.with { directory in
            try await TestUpstream.with { upstream in
                let cassette = directory.file("search.har")
                try await withMockServer(hosts: ["api.test": upstream.url]) { server, client in
                    try server.begin(MockSession(mode: .record, cassettePath: cassette))
                    _ = try await client.send(.GET, "/api.test/search?q=shoes&page=1")
                    _ = try await client.send(.POST, "/api.test/orders", body: #"{"id":1}"#)
                    try server.end()
                    try server.begin(MockSession(mode: .replay, cassettePath: cassette))
                    let miss = try await client.send(.GET, "/api.test/search?q=boots&page=1")
                    #expect(miss.status == 404)
                    #expect(miss.headers["x-orchestrate-unmatched"] == "1")
                    #expect(miss.body.contains("closest: GET \(upstream.url)/search?q=shoes&page=1"))
                    #expect(miss.body.contains("query: sent q=boots, recorded q=shoes"))
                    let body = try await client.send(.POST, "/api.test/orders", body: #"{"id":2}"#)
                    #expect(body.body.contains(#"body: {"id":2} vs {"id":1}"#))
                    let exchanges = await server.nextExchanges(4)
                    #expect(exchanges.map(\.matched) == [true, true, false, false])
                    #expect(exchanges[2].note?.rawValue.contains("closest") == true)
                    try server.end()
                }
            }
        }
    }

    @Test("a corrupt or newer cassette is an error naming the file")
    func corruptCassette() async throws {
        try await TemporaryDirectory.with { directory in
            let corrupt = directory.file("corrupt.har")
            try "{\"log\": {\"entries\": [".write(toFile: corrupt, atomically: true, encoding: .utf8)
            let newer = directory.file("newer.har")
            try
                #"{"log":{"version":"1.2","creator":{"name":"x","version":"9"},"entries":[],"_orchestrate":{"formatVersion":99,"randoms":{}}}}"#
                .write(toFile: newer, atomically: true, encoding: .utf8)
            let server = MockServer(configuration: MockConfiguration(), logger: Logger(label: "mock-test"))
            #expect { try server.begin(MockSession(mode: .replay, cassettePath: corrupt)) } throws: {
                "\($0)".hasPrefix("\(corrupt): not valid JSON")
            }
            #expect { try server.begin(MockSession(mode: .replay, cassettePath: newer)) } throws: {
                "\($0)".contains("format 99 is newer")
            }
            await server.shutdown()
        }
    }

    @Test("replay without a cassette serves no request and says where the cassette was expected")
    func missingCassette() async throws {
        try await TemporaryDirectory.with { directory in
            try await withMockServer(hosts: ["api.test": "http://127.0.0.1:9"]) { server, client in
                let path = directory.file("Recordings/never-recorded.har")
                try server.begin(MockSession(mode: .replay, cassettePath: path))
                let response = try await client.send(.GET, "/api.test/items")
                #expect(response.status == 404)
                #expect(response.body.contains("no cassette at \(path)") && response.body.contains("--mode record"))
                try server.end()
            }
        }
    }

    @Test("secrets never reach the exchange log")
    func redaction() async throws {
        try await TestUpstream.with { upstream in
            try await withMockServer(hosts: ["api.test": upstream.url]) { server, client in
                try server.begin(MockSession(mode: .live))
                _ = try await client.send(
                    .GET, "/api.test/me", headers: [("Authorization", "Bearer s3cret"), ("Cookie", "sid=1")])
                let exchange = try #require(await server.nextExchanges(1).first)
                #expect(exchange.requestHeaders.first { $0.name == "Authorization" }?.value == "[REDACTED]")
                #expect(exchange.requestHeaders.first { $0.name == "Cookie" }?.value == "[REDACTED]")
                #expect(exchange.responseHeaders.first { $0.name.lowercased() == "set-cookie" }?.value == "[REDACTED]")
                #expect(exchange.url == "\(upstream.url)/me")
                #expect(exchange.status == 200 && exchange.matched)
                try server.end()
            }
        }
    }

    @Test("malformed HTTP gets 400 and the server keeps serving; pipelined requests are answered in order")
    func malformedAndPipelined() async throws {
        try await withMockServer(hosts: [:]) { server, client in
            try server.begin(MockSession(mode: .live))
            let port = server.port!
            let bad = try await RawSocket.exchange(port: port, send: "GARBAGE\r\n\r\n")
            #expect(bad.hasPrefix("HTTP/1.1 400"))
            let pipelined = try await RawSocket.exchange(
                port: port,
                send:
                    "GET /__orchestrate/health HTTP/1.1\r\nHost: x\r\n\r\nGET /nowhere/a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
            )
            // Status lines, in the order the responses came (a body is directly followed by the next response).
            let statuses = pipelined.components(separatedBy: "HTTP/1.1 ").dropFirst().map {
                $0.components(separatedBy: "\r\n")[0]
            }
            #expect(statuses == ["200 OK", "403 Forbidden"])
            #expect(try await client.send(.GET, "/__orchestrate/health").status == 200)
            try server.end()
        }
    }
}

/// A plain TCP client for what HTTP clients refuse to send.
enum RawSocket {
    static func exchange(port: Int, send text: String) async throws -> String {
        String(decoding: try await read(port: port, send: text).bytes, as: UTF8.self)
    }

    /// Sends `text` and reads until the server closes; `error` is the errno that ended reading (0 at a clean end).
    /// The blocking socket calls run on a thread of their own, never on the tests' cooperative pool.
    static func read(port: Int, send text: String) async throws -> (bytes: [UInt8], error: Int32) {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try blockingRead(port: port, send: text) })
            }
        }
    }

    private static func blockingRead(port: Int, send text: String) throws -> (bytes: [UInt8], error: Int32) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        try #require(connected == 0)
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        _ = text.withCString { write(descriptor, $0, strlen($0)) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = Glibc.read(descriptor, &buffer, buffer.count)
            if count < 0 { return (received, errno) }
            if count == 0 { break }
            received.append(contentsOf: buffer[0..<count])
        }
        return (received, 0)
    }
}
