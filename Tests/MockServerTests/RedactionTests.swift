import AsyncHTTPClient
import CompressNIO
import Foundation
import Logging
import MockServer
import NIOCore
import NIOHTTP1
import OrchestrateModel
import OrchestrateTesting
import PostgresNIO
import Store
import Synchronization
import Testing

/// Every log line, with its metadata, as text.
final class CapturedLog: LogHandler, @unchecked Sendable {
    let lines = Mutex<[String]>([])
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        lines.withLock { $0.append("\(event.level) \(event.message) \(event.metadata ?? [:]) \(metadata)") }
    }
}

@Suite("Redaction", .timeLimit(.minutes(1)))
struct RedactionTests {
    @Test("redacted headers and JSON fields appear nowhere: not in the cassette, the database or the logs")
    func nowhere() async throws {
        try await TemporaryDirectory.with { directory in
            try await TestUpstream.with { upstream in
                let captured = CapturedLog()
                let logger = Logger(label: "redaction") { _ in captured }
                var configuration = MockConfiguration()
                configuration.hosts = ["api.test": upstream.url]
                configuration.redactedJSON = [try JSONPath("$.password"), try JSONPath("$..token")]
                configuration.redactedHeaders.insert("x-api-key")
                let server = MockServer(configuration: configuration, logger: logger)
                let client = MockClient()
                try await server.start(port: 0)
                client.base = "http://127.0.0.1:\(server.port!)"
                let cassette = directory.file("login.har")
                let secrets = ["pw-SECRET", "s3cret", "key-SECRET", "-SECRET\""]
                try await withTestDatabase { database in
                    let attemptID = try await makeRunningAttempt(in: database, scenario: "login")
                    let writer = NetworkLogWriter(store: ExchangeStore(database: database), spoolDirectory: directory.file("spool"), logger: logger)
                    let drain = Task {
                        for await event in server.events {
                            if let id = event.attemptID, case .exchange(let exchange) = event { writer.append(exchange, attemptID: id) }
                        }
                    }
                    let headers = [("content-type", "application/json"), ("authorization", "Bearer s3cret"), ("x-api-key", "key-SECRET")]
                    try server.begin(MockSession(mode: .record, cassettePath: cassette, attemptID: attemptID))
                    let login = try await client.send(
                        .POST, "/api.test/v1/login", body: #"{"user": "ann", "password": "pw-SECRET"}"#, headers: headers)
                    #expect(login.body.contains("-SECRET"))  // the app gets the real token
                    let (_, _, zipped) = try await client.sendBytes(
                        .POST, "/api.test/v1/login?gzip=1", body: #"{"password": "pw-SECRET"}"#, headers: headers)
                    var buffer = ByteBuffer(bytes: zipped)
                    #expect(String(buffer: try buffer.decompress(with: .gzip())).contains("-SECRET"))
                    try server.end()
                    // Replay compares redacted bodies; a near miss shows the redacted form.
                    try server.begin(MockSession(mode: .replay, cassettePath: cassette, attemptID: attemptID))
                    let replayed = try await client.send(
                        .POST, "/api.test/v1/login", body: #"{"user": "ann", "password": "other-pw-SECRET"}"#, headers: headers)
                    #expect(replayed.status == 200)
                    let miss = try await client.send(
                        .POST, "/api.test/v1/login", body: #"{"user": "bob", "password": "pw-SECRET"}"#, headers: headers)
                    #expect(miss.status == 404 && miss.body.contains("[REDACTED]") && !miss.body.contains("pw-SECRET"))
                    try server.end()
                    await server.shutdown()
                    await drain.value
                    #expect(await writer.close() == 0)

                    let text = try String(contentsOfFile: cassette, encoding: .utf8)
                    #expect(text.contains("[REDACTED]"))
                    let har = try JSONDecoder().decode(HAR.self, from: Data(text.utf8))
                    var gzipped = ByteBuffer(bytes: Data(base64Encoded: try #require(har.log.entries[1].response.content.text)) ?? Data())
                    let inflated = String(buffer: try gzipped.decompress(with: .gzip()))
                    #expect(inflated.contains("[REDACTED]"))
                    let rows = try await database.client.query(
                        """
                        SELECT request_headers::text || response_headers::text || encode(request_body, 'escape') || encode(response_body, 'escape')
                            || coalesce(note, '') FROM exchange_log
                        """,
                        logger: logger
                    )
                    var stored = ""
                    for try await row in rows.decode(String.self) { stored += row }
                    #expect(stored.contains("[REDACTED]"))
                    let logs = captured.lines.withLock { $0.joined(separator: "\n") }
                    #expect(logs.contains("unmatched request in replay"))
                    for secret in secrets {
                        #expect(!text.contains(secret) && !inflated.contains(secret), "cassette holds \(secret)")
                        #expect(!stored.contains(secret), "database holds \(secret)")
                        #expect(!logs.contains(secret), "logs hold \(secret)")
                    }
                }
                try await client.http.shutdown()
            }
        }
    }
}
