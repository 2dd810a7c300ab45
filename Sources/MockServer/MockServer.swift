import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import OrchestrateModel
import Synchronization

/// The mock server of one worker slot: an HTTP/1.1 server on 127.0.0.1 that records, replays, forwards
/// live or mocks the backends the app under test talks to.
///
/// The app addresses `http://127.0.0.1:PORT/<host>/<path>`: the first path component is the host it
/// meant, looked up in ``MockConfiguration/hosts`` (anything else gets 403: never an open proxy).
/// One server serves a slot for the whole run; ``begin(_:)`` starts each attempt's session and
/// ``end()`` closes it (writing the recording in record mode). Every exchange and step is emitted on
/// ``events`` for the caller to store; the server itself knows no database.
package final class MockServer: Sendable {
    package let configuration: MockConfiguration
    /// Exchanges and steps as they happen; the caller drains them (into PostgreSQL).
    package let events: AsyncStream<MockEvent>
    private let continuation: AsyncStream<MockEvent>.Continuation
    private let logger: Logger
    private let client: HTTPClient
    private let rewriter: URLRewriter
    let state: Mutex<State>
    private let channel = Mutex<(any Channel)?>(nil)

    struct ReplyKey: Hashable {
        var index: Int
        var base: String
    }

    struct State {
        var session = MockSession(mode: .replay)
        var matcher: RequestMatcher?
        /// The cassette's responses, decoded once per session (replay serves them many times).
        var replies: [MockResponse] = []
        /// Replies with their URLs rewritten, by reply and mock base URL.
        var rewrittenReplies: [ReplyKey: MockResponse] = [:]
        var recording: Cassette?
        var used: [Int: Int] = [:]
        var sequence = 0
        /// Replay without a cassette: a scenario that makes no requests needs none; requests are told where it was expected.
        var missingCassette: String?
        var stubs: StubBook
        var steps: [Step] = []
        var openStep: Int?
        /// Recorded values: from the cassette in replay, collected in record and live.
        var randoms: [String: String] = [:]

        /// Whether recordings answer: in replay, and in hybrid when the session has a cassette.
        var replays: Bool { session.mode == .replay || (session.mode == .hybrid && matcher != nil) }
    }

    package init(configuration: MockConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        (events, continuation) = AsyncStream.makeStream(of: MockEvent.self, bufferingPolicy: .unbounded)
        rewriter = URLRewriter(hosts: configuration.rewriteURLs ? configuration.hosts : [:])
        state = Mutex(State(stubs: StubBook(configured: configuration.stubs)))
        var clientConfiguration = HTTPClient.Configuration()
        clientConfiguration.decompression = .disabled
        clientConfiguration.redirectConfiguration = .disallow
        clientConfiguration.timeout = .init(connect: .seconds(10), read: .seconds(60))
        client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: clientConfiguration)
    }

    /// The port the server listens on, once started.
    package var port: Int? { channel.withLock { $0?.localAddress?.port } }

    /// Listens on an already bound and listening socket (a slot's port lease); the server takes a
    /// duplicate of the descriptor, the caller keeps its own.
    package func start(adopting descriptor: Int32) async throws {
        let copy = dup(descriptor)
        guard copy >= 0 else { throw MockServerError(.bind, "cannot take over the slot's socket: \(String(cString: strerror(errno)))") }
        let bound = try await bootstrap().withBoundSocket(copy).get()
        channel.withLock { $0 = bound }
    }

    /// Listens on 127.0.0.1:`port` (0: any free port).
    package func start(host: String = "127.0.0.1", port: Int) async throws {
        do {
            let bound = try await bootstrap().bind(host: host, port: port).get()
            channel.withLock { $0 = bound }
        } catch {
            throw MockServerError(.bind, "cannot listen on \(host):\(port): \(error)")
        }
    }

    private func bootstrap() -> ServerBootstrap {
        let server = self
        let maximum = configuration.maximumBodyBytes
        return ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withPipeliningAssistance: false, withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(HTTPRequestHandler(maximumBodyBytes: maximum) { request, tooLarge in
                        await server.respond(to: request, bodyTooLarge: tooLarge)
                    })
                }
            }
    }

    /// Stops listening, ends the event stream and the upstream client.
    package func shutdown() async {
        let bound = channel.withLock { channel -> (any Channel)? in
            defer { channel = nil }
            return channel
        }
        try? await bound?.close()
        continuation.finish()
        try? await client.shutdown()
    }

    // MARK: Sessions

    /// Starts a session: a new mode, cassette, seed and clock, nothing kept from the previous one.
    /// Replay reads the cassette now, so that a missing or corrupt one fails the attempt before it starts.
    /// Returns the session as it runs: in replay with the recording's frozen clock and seed, so that the
    /// test computes the same requests it made when it was recorded.
    @discardableResult
    package func begin(_ session: MockSession) throws(MockServerError) -> MockSession {
        var session = session
        var matcher: RequestMatcher?
        var replies: [MockResponse] = []
        var recording: Cassette?
        var missingCassette: String?
        var randoms: [String: String] = [:]
        switch session.mode {
        case .replay, .hybrid:
            guard let path = session.cassettePath else {
                if session.mode == .hybrid { break }
                throw MockServerError(.cassette, "replay needs a cassette")
            }
            // access(2), not FileManager: this runs before every attempt, and most find no cassette in a suite without them.
            if access(path, F_OK) == 0 {
                let cassette = try Cassette.load(path)
                replies = cassette.entries.map { entry in
                    MockResponse(status: entry.response.status, headers: entry.response.headers.map { (name: $0.name, value: $0.value) },
                                 body: entry.responseBody)
                }
                randoms = cassette.extras.randoms
                session.now = cassette.extras.now ?? session.now
                session.seed = cassette.extras.seed ?? session.seed
                matcher = RequestMatcher(entries: cassette.entries, configuration: configuration)
            } else if session.mode == .replay {
                missingCassette = path
                matcher = RequestMatcher(entries: [], configuration: configuration)
            }
        case .record:
            guard let path = session.cassettePath else { throw MockServerError(.cassette, "record needs a cassette path") }
            recording = Cassette(path: path, extras: CassetteExtras(scenarioID: session.scenarioID, seed: session.seed, now: session.now))
        case .live, .mock, .compare:
            break
        }
        let configured = configuration.stubs
        state.withLock { state in
            state = State(session: session, matcher: matcher, replies: replies, recording: recording, missingCassette: missingCassette,
                          stubs: StubBook(configured: configured), randoms: recording == nil ? randoms : [:])
        }
        return session
    }

    /// Steps the test reported through the control API in this session so far.
    package var reportedSteps: Int { state.withLock { $0.steps.count } }

    /// Ends the session; in record mode writes the cassette (atomically) and returns it.
    @discardableResult
    package func end() throws(MockServerError) -> Cassette? {
        let configured = configuration.stubs
        let (recording, open, attemptID) = state.withLock { state -> (Cassette?, Step?, Int64?) in
            defer { state = State(stubs: StubBook(configured: configured)) }
            var recording = state.recording
            recording?.har.log.orchestrate?.randoms = state.randoms
            return (recording, state.openStep.map { state.steps[$0 - 1] }, state.session.attemptID)
        }
        if var open {
            open.status = "unfinished"
            open.finishedAt = Date()
            continuation.yield(.step(open, attemptID: attemptID))
        }
        try recording?.save()
        return recording
    }

    // MARK: Requests

    func respond(to request: ReceivedRequest, bodyTooLarge: Bool) async -> MockResponse {
        let started = Date()
        let clock = ContinuousClock.now
        if request.uri.hasPrefix("/__orchestrate") { return control(request) }
        let mockRequest = MockRequest(method: request.method, uri: request.uri, headers: request.headers, body: request.body)
        // What is written anywhere and what matching compares: the body with its secrets redacted.
        let loggedBody = redactedBody(mockRequest.body, headers: mockRequest.headers)
        let (session, openStep, replays) = state.withLock { ($0.session, $0.openStep, $0.replays) }
        var exchange = Exchange(
            sequence: 0, mode: session.mode, matched: false, host: mockRequest.host, method: mockRequest.method,
            url: request.uri, requestHeaders: redacted(mockRequest.headers), requestBody: loggedBody, status: nil,
            responseHeaders: [], responseBody: [], startedAt: started, durationMicroseconds: 0, attemptID: session.attemptID,
            stepPosition: openStep
        )
        let upstream = configuration.hosts[mockRequest.host]
        if let upstream { exchange.url = Self.originalURL(upstream: upstream, request: mockRequest) }
        let stubsFirst = session.mode == .mock || session.mode == .hybrid
        var response: MockResponse
        // The cassette entry replayed, if any.
        var replyIndex: Int?
        if bodyTooLarge {
            response = .text(413, "orchestrate: request body larger than mock.maximumBodyBytes (\(configuration.maximumBodyBytes) bytes)")
            exchange.note = "request body too large"
        } else if let stubbed = state.withLock({ $0.stubs.answer(mockRequest, session: session, runtimeOnly: !stubsFirst) }) {
            response = stubbed
            exchange.matched = true
            exchange.note = "stub"
        } else if let upstream {
            switch session.mode {
            case _ where replays:
                // Recordings hold redacted bodies: matching compares the redacted form.
                var redactedRequest = mockRequest
                redactedRequest.body = loggedBody
                (response, replyIndex) = replay(redactedRequest, exchange: &exchange)
            case .record, .live, .hybrid:
                response = await forward(mockRequest, to: upstream, loggedBody: loggedBody, exchange: &exchange)
            default:
                response = noStub(mockRequest, exchange: &exchange)
            }
        } else if stubsFirst {
            response = noStub(mockRequest, exchange: &exchange)
        } else {
            let known = configuration.hosts.keys.sorted()
            let message = mockRequest.host.isEmpty
                ? "orchestrate: the first path component must be the host the app meant, as in /api.example.com/v1/items"
                : "orchestrate: host \"\(mockRequest.host)\" is not in mock.hosts of the configuration"
                    + (known.isEmpty ? " (no hosts are configured)" : " (configured: \(known.joined(separator: ", ")))")
                    + "; requests are only forwarded to configured hosts"
            response = .text(403, message)
            exchange.note = "host not configured"
            logger.warning("refused a request to a host that is not configured", metadata: ["mock.host": "\(mockRequest.host)"])
        }
        if let delay = response.delay { try? await Task.sleep(for: delay) }
        exchange.status = response.fault.map { $0 == .dribble ? response.status : nil } ?? response.status
        if let fault = response.fault { exchange.note = "fault: \(fault.rawValue)" }
        exchange.responseHeaders = redacted(response.headers)
        exchange.responseBody = redactedBody(response.body, headers: response.headers)
        if exchange.matched, let replyIndex {
            response = rewrittenReply(replyIndex, response, requestHeaders: request.headers)
        } else if exchange.matched {
            rewriteURLs(&response, requestHeaders: request.headers)
        }
        exchange.durationMicroseconds = Int64((ContinuousClock.now - clock).wholeMicroseconds)
        exchange.sequence = state.withLock { state in
            state.sequence += 1
            return state.sequence
        }
        continuation.yield(.exchange(exchange))
        return response
    }

    private func noStub(_ request: MockRequest, exchange: inout Exchange) -> MockResponse {
        exchange.note = "no stub"
        logger.warning("no stub answers a request", metadata: ["mock.request": "\(request.summary)"])
        return .text(404, "orchestrate: no stub answers \(request.summary) (\(exchange.mode.rawValue) mode; add one to mock.stubs or POST it to /__orchestrate/stubs)",
                     headers: [("x-orchestrate-unmatched", "1")])
    }

    /// The recorded response that answers the request, and its index in the cassette.
    private func replay(_ request: MockRequest, exchange: inout Exchange) -> (MockResponse, Int?) {
        let (outcome, missing) = state.withLock { state -> (Result<(Int, MockResponse), RequestMatcher.NearMiss>?, String?) in
            guard let matcher = state.matcher else { return (nil, nil) }
            return (matcher.match(request, used: &state.used).map { ($0, state.replies[$0]) }, state.missingCassette)
        }
        if let missing {
            exchange.note = "no cassette"
            return (.text(404, "orchestrate: no cassette at \(missing) to replay \(request.summary) from; record it first (--mode record)",
                          headers: [("x-orchestrate-unmatched", "1")]), nil)
        }
        switch outcome {
        case nil:
            exchange.note = "no replay session"
            return (.text(500, "orchestrate: the mock server has no replay session"), nil)
        case .failure(let miss)?:
            exchange.note = miss.description
            logger.warning("unmatched request in replay", metadata: ["mock.request": "\(request.summary)"])
            return (.text(404, "orchestrate: \(miss)", headers: [("x-orchestrate-unmatched", "1")]), nil)
        case .success(let (index, reply))?:
            exchange.matched = true
            return (reply, index)
        }
    }

    /// Sends the request to the upstream (record, live); in record mode the exchange joins the recording.
    private func forward(_ request: MockRequest, to upstream: String, loggedBody: [UInt8], exchange: inout Exchange) async -> MockResponse {
        var outgoing = HTTPClientRequest(url: exchange.url)
        outgoing.method = HTTPMethod(rawValue: request.method)
        for header in request.headers where !HopByHop.contains(header.name) {
            // Only codings the server can read back for rewriting and redaction.
            if header.name.equalsIgnoringASCIICase("accept-encoding") {
                let readable = Self.readableCodings(header.value)
                if !readable.isEmpty { outgoing.headers.add(name: header.name, value: readable) }
                continue
            }
            outgoing.headers.add(name: header.name, value: header.value)
        }
        if !request.body.isEmpty { outgoing.body = .bytes(ByteBuffer(bytes: request.body)) }
        let clock = ContinuousClock.now
        let response: MockResponse
        do {
            let upstreamResponse = try await client.execute(outgoing, timeout: .seconds(60))
            let body = try await upstreamResponse.body.collect(upTo: configuration.maximumBodyBytes)
            response = MockResponse(
                status: Int(upstreamResponse.status.code),
                headers: upstreamResponse.headers.map { (name: $0.name, value: $0.value) },
                body: Array(buffer: body)
            )
        } catch {
            exchange.note = "upstream error: \(error)"
            return .text(502, "orchestrate: \(exchange.url) could not be reached: \(error)")
        }
        exchange.matched = true
        let elapsed = Double((ContinuousClock.now - clock).wholeMicroseconds) / 1000
        var logged = request
        logged.body = loggedBody
        let entry = recordedEntry(logged, exchange: exchange, response: response, milliseconds: elapsed)
        state.withLock { state in
            guard state.session.mode == .record, state.recording != nil else { return }
            var entry = entry
            entry.orchestrate?.sequence = state.recording!.har.log.entries.count + 1
            state.recording!.har.log.entries.append(entry)
        }
        return response
    }

    /// The codings of an Accept-Encoding header that the server decodes (gzip, deflate, identity).
    static func readableCodings(_ value: String) -> String {
        value.split(separator: ",").filter { part in
            let coding = part.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
            return ["gzip", "x-gzip", "deflate", "identity"].contains(coding)
        }.map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", ")
    }

    /// A HAR entry for a forwarded exchange, secrets redacted (the request's body already is).
    private func recordedEntry(_ request: MockRequest, exchange: Exchange, response: MockResponse, milliseconds: Double) -> HAR.Entry {
        var recorded = exchange
        recorded.requestHeaders = redacted(request.headers.filter { !HopByHop.contains($0.name) })
        recorded.requestBody = request.body
        recorded.status = response.status
        recorded.responseHeaders = redacted(response.headers)
        recorded.responseBody = redactedBody(response.body, headers: response.headers)
        recorded.durationMicroseconds = Int64((milliseconds * 1000).rounded())
        return HAR.Entry(
            recorded,
            queryString: MockRequest.queryItems(request.rawQuery).map { HAR.NameValue(name: $0.name, value: $0.value) },
            statusText: HTTPResponseStatus(statusCode: response.status).reasonPhrase
        )
    }

    // MARK: Rewriting and redaction

    /// A replayed response with its URLs rewritten, once per session and mock base URL.
    private func rewrittenReply(_ index: Int, _ reply: MockResponse, requestHeaders: [(name: String, value: String)]) -> MockResponse {
        guard !rewriter.isEmpty else { return reply }
        let key = ReplyKey(index: index, base: mockBase(requestHeaders))
        if let known = state.withLock({ $0.rewrittenReplies[key] }) { return known }
        var rewritten = reply
        rewriteURLs(&rewritten, requestHeaders: requestHeaders)
        state.withLock { $0.rewrittenReplies[key] = rewritten }
        return rewritten
    }

    /// This server's URL as the app addresses it (its Host header).
    private func mockBase(_ requestHeaders: [(name: String, value: String)]) -> String {
        "http://" + (requestHeaders.value(named: "host") ?? "127.0.0.1:\(port ?? 0)")
    }

    /// Absolute URLs of configured hosts in the body and the link headers point back at this server.
    private func rewriteURLs(_ response: inout MockResponse, requestHeaders: [(name: String, value: String)]) {
        guard !rewriter.isEmpty else { return }
        let base = mockBase(requestHeaders)
        response.headers = rewriter.rewrite(headers: response.headers, mockBase: base)
        let coding = ContentCoding.coding(of: response.headers)
        if let body = ContentCoding.transform(response.body, coding: coding, maximumBytes: configuration.maximumBodyBytes, {
            rewriter.rewrite($0, mockBase: base)
        }) {
            response.body = body
        }
    }

    func redacted(_ headers: [(name: String, value: String)]) -> [Exchange.Header] {
        headers.map { header in
            Exchange.Header(name: header.name, value: configuration.redactedHeaders.contains(header.name.lowercasedASCII) ? Self.redactedValue : header.value)
        }
    }

    static let redactedValue = "[REDACTED]"

    /// The body with the configured JSON fields (mock.redact.json) replaced, through its content coding.
    func redactedBody(_ body: [UInt8], headers: [(name: String, value: String)]) -> [UInt8] {
        guard !configuration.redactedJSON.isEmpty, !body.isEmpty else { return body }
        let coding = ContentCoding.coding(of: headers)
        return ContentCoding.transform(body, coding: coding, maximumBytes: configuration.maximumBodyBytes) { decoded in
            guard var document = try? JSONDecoder().decode(JSONValue.self, from: Data(decoded)) else { return nil }
            var found = false
            for path in configuration.redactedJSON {
                found = path.apply(to: &document) { _ in .string(Self.redactedValue) } || found
            }
            guard found else { return nil }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            return (try? encoder.encode(document)).map(Array.init)
        } ?? body
    }

    /// The URL the app meant: the upstream base with the request's path and query.
    static func originalURL(upstream: String, request: MockRequest) -> String {
        let base = upstream.hasSuffix("/") ? String(upstream.dropLast()) : upstream
        return "\(base)\(request.path)\(request.rawQuery.isEmpty ? "" : "?\(request.rawQuery)")"
    }

    func emit(_ event: MockEvent) {
        continuation.yield(event)
    }
}
