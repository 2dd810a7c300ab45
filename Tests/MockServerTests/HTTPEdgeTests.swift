import Foundation
import MockServer
import OrchestrateModel
import OrchestrateTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A TCP connection that sends raw bytes and reads what comes back until the server closes it (or `wait` passes).
struct RawConnection {
    let descriptor: Int32

    init(port: Int) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        try #require(connected == 0, "cannot connect to port \(port)")
    }

    func send(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// No more from this side (the server still may answer).
    func halfClose() { shutdown(descriptor, Int32(SHUT_WR)) }

    /// Everything until the server closes the connection, and how long that took; `nil` when it did not within `wait`.
    /// Blocks a thread of its own, not the cooperative pool the server answers on.
    func readToEnd(wait: Duration) async -> (text: String, took: Duration)? {
        await blockingOffPool { blockingReadToEnd(wait: wait) }
    }

    private func blockingReadToEnd(wait: Duration) -> (text: String, took: Duration)? {
        let clock = ContinuousClock()
        let start = clock.now
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while clock.now - start < wait {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) >= 0 else { return nil }
            guard poller.revents != 0 else { continue }
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count <= 0 { return (String(decoding: received, as: UTF8.self), clock.now - start) }
            received += buffer[0..<count]
        }
        return nil
    }

    func close() { Glibc.close(descriptor) }
}

@Suite("The mock server's HTTP edges", .timeLimit(.minutes(1)))
struct HTTPEdgeTests {
    static func withServer(readTimeout: Duration = .seconds(1), _ body: (Int) async throws -> Void) async throws {
        try await withMockServer(
            hosts: [:],
            configure: { configuration in
                configuration.readTimeout = readTimeout
                configuration.stubs = [
                    try Stub(
                        .object([
                            "request": .object(["path": .string("/fast")]),
                            "response": .object(["body": .string("fast")]),
                        ])),
                    try Stub(
                        .object([
                            "request": .object(["path": .string("/slow")]),
                            "response": .object(["body": .string("slow"), "delay": .string("2s")]),
                        ])),
                ]
            }
        ) { server, _ in
            try server.begin(MockSession(mode: .mock))
            try await body(try #require(server.port))
            try server.end()
        }
    }

    @Test("a request followed by the client's half-close is answered, pipelined ones too, then the connection closes")
    func halfClose() async throws {
        try await Self.withServer { port in
            let connection = try RawConnection(port: port)
            defer { connection.close() }
            connection.send(
                "GET /api.test/fast HTTP/1.1\r\nHost: x\r\n\r\nGET /api.test/fast HTTP/1.1\r\nHost: x\r\n\r\n")
            connection.halfClose()
            let answer = try #require(
                await connection.readToEnd(wait: .seconds(10)), "no answer, or the connection stayed open")
            #expect(answer.text.components(separatedBy: "HTTP/1.1 200 OK").count == 3, "\(answer.text)")
        }
    }

    @Test("a bare HTTP/0.9 request gets a 400 and the connection closes")
    func http09() async throws {
        try await Self.withServer { port in
            let connection = try RawConnection(port: port)
            defer { connection.close() }
            connection.send("GET /api.test/fast\r\n")
            let answer = try #require(await connection.readToEnd(wait: .seconds(10)), "no answer")
            #expect(
                answer.text.hasPrefix("HTTP/1.1 400 Bad Request") && answer.text.contains("HTTP/0.9"), "\(answer.text)")
        }
    }

    @Test(
        "a body that stops coming gets 408 after the read timeout; an idle connection is closed; a slow answer is waited for"
    )
    func readTimeout() async throws {
        try await Self.withServer(readTimeout: .seconds(1)) { port in
            // Announces 200 MB and sends 1 KB.
            let stalled = try RawConnection(port: port)
            defer { stalled.close() }
            stalled.send(
                "POST /api.test/fast HTTP/1.1\r\nHost: x\r\nContent-Length: 200000000\r\n\r\n"
                    + String(repeating: "x", count: 1024))
            let cut = try #require(await stalled.readToEnd(wait: .seconds(10)), "held open")
            #expect(cut.text.hasPrefix("HTTP/1.1 408") && cut.took < .seconds(5), "\(cut)")
            // Connected, never sends.
            let idle = try RawConnection(port: port)
            defer { idle.close() }
            let closed = try #require(await idle.readToEnd(wait: .seconds(10)), "held open")
            #expect(closed.text.isEmpty && closed.took < .seconds(5))
            // The answer takes 2 s, longer than the read timeout: the request still gets it.
            let waiting = try RawConnection(port: port)
            defer { waiting.close() }
            waiting.send("GET /api.test/slow HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            let slow = try #require(await waiting.readToEnd(wait: .seconds(10)), "no answer")
            #expect(slow.text.hasPrefix("HTTP/1.1 200 OK") && slow.text.hasSuffix("slow"), "\(slow.text)")
        }
    }
}
