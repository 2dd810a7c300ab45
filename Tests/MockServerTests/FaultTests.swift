import AsyncHTTPClient
import Foundation
import MockServer
import NIOCore
import NIOHTTP1
import OrchestrateModel
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("Mock server faults, as clients see them", .timeLimit(.minutes(1)))
struct FaultTests {
    func withFaults(_ body: (MockServer, MockClient) async throws -> Void) async throws {
        try await withMockServer(
            hosts: [:],
            configure: { configuration in
                configuration.stubs = try Fault.allCases.map { fault in
                    try stub(
                        #"{"request": {"path": "/\#(fault.rawValue)"}, "response": {"fault": "\#(fault.rawValue)", "body": "0123456789abcdefghij"}}"#
                    )
                }
            }
        ) { server, client in
            try server.begin(MockSession(mode: .mock))
            try await body(server, client)
            try server.end()
        }
    }

    @Test("reset: the connection is reset without an answer")
    func reset() async throws {
        try await withFaults { server, client in
            let raw = try await RawSocket.read(
                port: server.port!, send: "GET /api.test/reset HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(raw.bytes.isEmpty && raw.error == ECONNRESET)
            await #expect(throws: (any Error).self) { try await client.send(.GET, "/api.test/reset") }
        }
    }

    @Test("close-before-body: headers promise a body, then the connection closes")
    func closeBeforeBody() async throws {
        try await withFaults { server, client in
            let raw = try await RawSocket.read(
                port: server.port!, send: "GET /api.test/close-before-body HTTP/1.1\r\nHost: x\r\n\r\n")
            let text = String(decoding: raw.bytes, as: UTF8.self)
            #expect(
                text.hasPrefix("HTTP/1.1 200") && text.lowercased().contains("content-length: 20")
                    && text.hasSuffix("\r\n\r\n"))
            await #expect(throws: (any Error).self) { try await client.send(.GET, "/api.test/close-before-body") }
        }
    }

    @Test("dribble: the whole answer, slowly, in pieces")
    func dribble() async throws {
        try await withFaults { server, client in
            let clock = ContinuousClock.now
            let response = try await client.send(.GET, "/api.test/dribble")
            #expect(response.status == 200 && response.body == "0123456789abcdefghij")
            #expect(ContinuousClock.now - clock >= .milliseconds(900))
        }
    }

    @Test("malformed: bytes that are not HTTP, then the connection closes; the server serves on")
    func malformed() async throws {
        try await withFaults { server, client in
            let raw = try await RawSocket.read(
                port: server.port!, send: "GET /api.test/malformed HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(String(decoding: raw.bytes, as: UTF8.self).hasPrefix("HTTP/1.1 ???"))
            await #expect(throws: (any Error).self) { try await client.send(.GET, "/api.test/malformed") }
            let health = try await client.send(.GET, "/__orchestrate/health")
            #expect(health.status == 200)
            let exchanges = await server.nextExchanges(2)
            #expect(exchanges.allSatisfy { $0.status == nil && $0.note?.rawValue == "fault: malformed" })
        }
    }
}
