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

@Suite("Redaction", .timeLimit(.minutes(3)))
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
                    let writer = NetworkLogWriter(
                        store: ExchangeStore(database: database), spoolDirectory: directory.file("spool"),
                        logger: logger)
                    let drain = Task {
                        for await event in server.events {
                            if let id = event.attemptID, case .exchange(let exchange) = event {
                                writer.append(exchange, attemptID: id)
                            }
                        }
                    }
                    let headers = [
                        ("content-type", "application/json"), ("authorization", "Bearer s3cret"),
                        ("x-api-key", "key-SECRET"),
                    ]
                    try server.begin(MockSession(mode: .record, cassettePath: cassette, attemptID: attemptID))
                    let login = try await client.send(
                        .POST, "/api.test/v1/login", body: #"{"user": "ann", "password": "pw-SECRET"}"#,
                        headers: headers)
                    #expect(login.body.contains("-SECRET"))  // the app gets the real token
                    let (_, _, zipped) = try await client.sendBytes(
                        .POST, "/api.test/v1/login?gzip=1", body: #"{"password": "pw-SECRET"}"#, headers: headers)
                    var buffer = ByteBuffer(bytes: zipped)
                    #expect(String(buffer: try buffer.decompress(with: .gzip())).contains("-SECRET"))
                    try server.end()
                    // Replay compares redacted bodies; a near miss shows the redacted form.
                    try server.begin(MockSession(mode: .replay, cassettePath: cassette, attemptID: attemptID))
                    let replayed = try await client.send(
                        .POST, "/api.test/v1/login", body: #"{"user": "ann", "password": "other-pw-SECRET"}"#,
                        headers: headers)
                    #expect(replayed.status == 200)
                    let miss = try await client.send(
                        .POST, "/api.test/v1/login", body: #"{"user": "bob", "password": "pw-SECRET"}"#,
                        headers: headers)
                    #expect(miss.status == 404 && miss.body.contains("[REDACTED]") && !miss.body.contains("pw-SECRET"))
                    try server.end()
                    await server.shutdown()
                    await drain.value
                    #expect(await writer.close() == 0)

                    let text = try String(contentsOfFile: cassette, encoding: .utf8)
                    #expect(text.contains("[REDACTED]"))
                    let har = try JSONDecoder().decode(HAR.self, from: Data(text.utf8))
                    var gzipped = ByteBuffer(
                        bytes: Data(base64Encoded: try #require(har.log.entries[1].response.content.text)) ?? Data())
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

    @Test(
        "a secret is searched as it is, JSON-escaped and percent-encoded, longest first; short values are not searched")
    func forms() {
        let secrets = Secrets(["a/b \"c\" d", "Bearer tok-123456", "tok-123456", "short"])
        #expect(
            secrets.scrubbed(#"{"v":"a\/b \"c\" d","q":"x=a%2Fb%20%22c%22%20d"}"#)
                == #"{"v":"[REDACTED]","q":"x=[REDACTED]"}"#)
        #expect(secrets.scrubbed(#"{"v":"a/b \"c\" d"}"#) == #"{"v":"[REDACTED]"}"#, "a writer that leaves / alone")
        #expect(
            secrets.scrubbed("Authorization: Bearer tok-123456; again tok-123456.")
                == "Authorization: [REDACTED]; again [REDACTED].")
        #expect(secrets.scrubbed(Array("a short text".utf8)) == nil, "five bytes are not searched")
        #expect(Secrets(["REDACT"]).scrubbed("REDACT REDACTED") == "[REDACTED] [REDACTED]ED")
        #expect(
            Secrets.looksSecret("github_token") && Secrets.looksSecret("DB_PASSWORD") && Secrets.looksSecret("API_KEY"))
        #expect(!Secrets.looksSecret("APP_ENV"))
    }

    @Test(
        "a redacted value goes wherever else it appears: an echoed header, an echoed field, an env secret in a URL, a cookie in a later request; replay still matches"
    )
    func byValue() async throws {
        try await TemporaryDirectory.with { directory in
            try await TestUpstream.with { upstream in
                var configuration = MockConfiguration()
                configuration.hosts = ["api.test": upstream.url]
                configuration.redactedJSON = [try JSONPath("$.password")]
                configuration.secrets = Secrets(["env SECRET/value+1"])
                let server = MockServer(configuration: configuration, logger: Logger(label: "redaction"))
                let client = MockClient()
                try await server.start(port: 0)
                client.base = "http://127.0.0.1:\(server.port!)"
                let exchanges = Mutex<[Exchange]>([])
                let drain = Task {
                    for await case .exchange(let exchange) in server.events {
                        exchanges.withLock { $0.append(exchange) }
                    }
                }
                let cassette = directory.file("echo.har")
                let json = [("content-type", "application/json")]
                let query = "key=env%20SECRET%2Fvalue%2B1"
                try server.begin(MockSession(mode: .record, cassettePath: cassette))
                let echoed = try await client.send(
                    .GET, "/api.test/headers", headers: [("authorization", "Bearer hdr-SECRET-7")])
                #expect(echoed.body.contains("Bearer hdr-SECRET-7"), "the app gets the real answer")
                _ = try await client.send(
                    .POST, "/api.test/v1/echo", body: #"{"password": "pw-SECRET/1"}"#, headers: json)
                _ = try await client.send(.GET, "/api.test/v1/items?\(query)")
                // The upstream's first answer set the cookie session=secret-1: a later request that carries it
                // elsewhere.
                _ = try await client.send(.GET, "/api.test/v1/items?s=secret-1")
                try server.end()

                try server.begin(MockSession(mode: .replay, cassettePath: cassette))
                #expect(
                    try await client.send(.GET, "/api.test/v1/items?\(query)").status == 200,
                    "the env secret's request replays")
                #expect(
                    try await client.send(
                        .POST, "/api.test/v1/echo", body: #"{"password": "pw-SECRET/1"}"#, headers: json
                    ).status == 200)
                try server.end()
                await server.shutdown()
                await drain.value
                try await client.http.shutdown()

                let stored = exchanges.withLock { $0 }
                #expect(stored.count == 6)
                let text = stored.map { exchange in
                    ([exchange.url, exchange.note?.rawValue ?? ""]
                        + (exchange.requestHeaders + exchange.responseHeaders).map(\.value)
                        + [
                            String(decoding: exchange.requestBody, as: UTF8.self),
                            String(decoding: exchange.responseBody, as: UTF8.self),
                        ])
                        .joined(separator: "\n")
                }
                #expect(text[0].contains(#""authorization":"[REDACTED]""#), "\(text[0])")
                #expect(text[1].contains(#"\"password\": \"[REDACTED]\""#), "the echoed password: \(text[1])")
                #expect(text[2].contains("key=[REDACTED]"), "\(text[2])")
                #expect(text[3].contains("s=[REDACTED]"), "\(text[3])")
                let recorded = try String(contentsOfFile: cassette, encoding: .utf8)
                for secret in ["hdr-SECRET-7", "pw-SECRET", "env SECRET", "env%20SECRET", "secret-1"] {
                    for (index, exchange) in text.enumerated() {
                        #expect(!exchange.contains(secret), "exchange \(index + 1) holds \(secret)")
                    }
                    #expect(!recorded.contains(secret), "the cassette holds \(secret)")
                }
            }
        }
    }
}
