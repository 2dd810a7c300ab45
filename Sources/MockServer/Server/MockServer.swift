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
/// ``end()`` closes it (writing the recording in record mode). Every exchange and step goes to the caller's `onEvent`
/// handler, or else to ``events``, for the caller to store; the server itself knows no database.
///
/// Each request is stored as ``Redactor/stored(_:secrets:)`` makes it (with the secrets the session knows), takes the
/// session once to decide what answers it (``SessionState/decide(_:stored:bodyTooLarge:mockBase:)``, no I/O), then
/// carries the decision out: a stub's or a recording's answer, a forward to the upstream, or a refusal.
package final class MockServer: Sendable {
    package let configuration: MockConfiguration
    /// Exchanges and steps as they happen, for a caller that drains them; empty when they go to an `onEvent` handler.
    package let events: AsyncStream<MockEvent>
    private let continuation: AsyncStream<MockEvent>.Continuation
    private let onEvent: (@Sendable (MockEvent) -> Void)?
    let logger: Logger
    let client: HTTPClient
    let rewriter: URLRewriter
    let redactor: Redactor
    let state: Mutex<SessionState>
    private let channel = Mutex<(any Channel)?>(nil)

    /// A server (not listening yet). With `onEvent`, every exchange and step is handed to it where it happens (in the
    /// request's task; it must not block) instead of going to ``events``: a busy server would wake the stream's
    /// consumer for every exchange.
    package init(configuration: MockConfiguration, logger: Logger, onEvent: (@Sendable (MockEvent) -> Void)? = nil) {
        self.configuration = configuration
        self.logger = logger
        self.onEvent = onEvent
        (events, continuation) = AsyncStream.makeStream(of: MockEvent.self, bufferingPolicy: .unbounded)
        rewriter = URLRewriter(hosts: configuration.rewriteURLs ? configuration.hosts : [:])
        redactor = Redactor(configuration: configuration)
        state = Mutex(SessionState(configuration: configuration))
        var clientConfiguration = HTTPClient.Configuration()
        clientConfiguration.decompression = .disabled
        clientConfiguration.redirectConfiguration = .disallow
        // A failed connection is tried again (with backoff) until the connect timeout: short, so that a backend that
        // is down fails each request in seconds rather than holding every test of an outage for long.
        clientConfiguration.timeout = .init(connect: .seconds(3), read: .seconds(60))
        client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: clientConfiguration)
    }

    /// The port the server listens on, once started.
    package var port: Int? { channel.withLock { $0?.localAddress?.port } }

    /// Listens on an already bound and listening socket (a slot's port lease); the server takes a
    /// duplicate of the descriptor, the caller keeps its own.
    package func start(adopting descriptor: Int32) async throws {
        let copy = dup(descriptor)
        guard copy >= 0 else {
            throw MockServerError(.bind, "cannot take over the slot's socket: \(String(cString: strerror(errno)))")
        }
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
        let readTimeout = TimeAmount.nanoseconds(Int64(readTimeoutNanoseconds))
        return ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            // A client that half-closes after its request still gets the answer.
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(IdleStateHandler(readTimeout: readTimeout))
                    try channel.pipeline.syncOperations.addHandler(HTTP09Refusal())
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                        withPipeliningAssistance: false, withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(
                        HTTPRequestHandler(maximumBodyBytes: maximum) { request, tooLarge in
                            await server.respond(to: request, bodyTooLarge: tooLarge)
                        })
                }
            }
    }

    private var readTimeoutNanoseconds: Int64 {
        let (seconds, attoseconds) = configuration.readTimeout.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
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
        var next = SessionState(session: session, configuration: configuration)
        switch session.mode {
        case .replay, .hybrid:
            guard let path = session.cassettePath else {
                if session.mode == .hybrid { break }
                throw MockServerError(.cassette, "replay needs a cassette")
            }
            // access(2), not FileManager: this runs before every attempt, and most find no cassette in a suite without
            // them.
            if access(path, F_OK) == 0 {
                next = SessionState(session: session, replaying: try Cassette.load(path), configuration: configuration)
            } else if session.mode == .replay {
                next = SessionState(session: session, missingCassette: path, configuration: configuration)
            }
        case .record:
            guard session.cassettePath != nil else { throw MockServerError(.cassette, "record needs a cassette path") }
        case .live, .mock, .compare:
            break
        }
        state.withLock { $0 = next }
        return next.session
    }

    /// Steps the test reported through the control API in this session so far.
    package var reportedSteps: Int { state.withLock { $0.steps.count } }

    /// The position of the step that failed, or of the step still open (the test stopped in it), in this session.
    package var failingStep: Int? {
        state.withLock { state in
            state.steps.first { $0.status == .failed }?.position ?? state.openStep.map { state.steps[$0 - 1].position }
        }
    }

    /// The secret values of this session so far: the run's, and those its exchanges redacted.
    package var sessionSecrets: Secrets { state.withLock { $0.secrets } }

    /// Ends the session; in record mode writes the cassette (atomically) and returns it, unless `keepingRecording` is
    /// false (the attempt was lost: what it recorded is not a recording of the scenario).
    @discardableResult
    package func end(keepingRecording: Bool = true) throws(MockServerError) -> Cassette? {
        let (recording, open, attemptID) = state.withLock { state -> (Cassette?, Step?, Int64?) in
            defer { state = SessionState(configuration: configuration) }
            var recording = state.recording
            recording?.har.log.orchestrate?.randoms = state.randoms
            return (recording, state.openStep.map { state.steps[$0 - 1] }, state.session.attemptID)
        }
        if var open {
            open.status = .unfinished
            open.finishedAt = Date()
            emit(.step(open, attemptID: attemptID))
        }
        guard keepingRecording else { return nil }
        try recording?.save()
        return recording
    }

    // MARK: Requests

    /// One request between its decision and its answer: what the exchange says so far and what finishing it needs.
    struct InFlight: Sendable {
        var exchange: Exchange
        let decision: RequestDecision
        /// The session's secrets with those met in the request; ``finish(_:response:upstreamMicroseconds:)`` adds the
        /// response's.
        var secrets: Secrets
        /// How many secret values the session knew before this request.
        let knownSecrets: Int
        let requestHeaders: [(name: String, value: String)]
        /// The query as it is stored (secrets redacted), for a recording.
        let storedQuery: String
        let mockBase: String?
        let clock: ContinuousClock.Instant
    }

    /// The answer to a request. It runs in a task, off the connection's event loop, even when nothing is awaited: the
    /// event loops then only read and write, and a busy server spreads its work over more threads.
    func respond(to request: ReceivedRequest, bodyTooLarge: Bool) async -> MockResponse {
        let started = Date()
        let clock = ContinuousClock.now
        if request.uri.hasPrefix("/__orchestrate") { return control(request) }
        let mockRequest = MockRequest(
            method: request.method, uri: request.uri, headers: request.headers, body: request.body)
        let mockBase = rewriter.isEmpty ? nil : mockBase(request.headers)
        var secrets = state.withLock { $0.secrets }
        let known = secrets.values.count
        let (stored, storedHeaders) = redactor.stored(mockRequest, secrets: &secrets)
        let decision = state.withLock {
            $0.decide(mockRequest, stored: stored, bodyTooLarge: bodyTooLarge, mockBase: mockBase)
        }
        var exchange = Exchange(
            sequence: decision.sequence, mode: decision.session.mode, matched: false, host: mockRequest.host,
            method: mockRequest.method,
            url: secrets.scrubbed(request.uri), requestHeaders: storedHeaders, requestBody: stored.body, status: nil,
            responseHeaders: [], responseBody: [], startedAt: started, durationMicroseconds: 0,
            attemptID: decision.session.attemptID,
            stepPosition: decision.step
        )
        if let upstream = decision.upstream { exchange.url = Self.originalURL(upstream: upstream, request: stored) }
        var flight = InFlight(
            exchange: exchange, decision: decision, secrets: secrets, knownSecrets: known,
            requestHeaders: mockRequest.headers,
            storedQuery: stored.rawQuery, mockBase: mockBase, clock: clock
        )
        if case .forward(let upstream) = decision.action {
            let (response, upstreamMicroseconds) = await forward(
                mockRequest, to: Self.originalURL(upstream: upstream, request: mockRequest), exchange: &flight.exchange)
            return finish(&flight, response: response, upstreamMicroseconds: upstreamMicroseconds)
        }
        let response = answer(decision.action, to: stored, exchange: &flight.exchange)
        if let delay = response.delay { try? await Task.sleep(for: delay) }
        return finish(&flight, response: response)
    }

    /// The answer as the app gets it (URLs rewritten for it), and the exchange as it is stored (secrets redacted),
    /// emitted; a forwarded one joins the recording in record mode.
    private func finish(
        _ flight: inout InFlight, response: MockResponse, upstreamMicroseconds: Int64? = nil
    ) -> MockResponse {
        var response = response
        flight.exchange.status = response.fault.map { $0 == .dribble ? response.status : nil } ?? response.status
        if let fault = response.fault { flight.exchange.note = .fault(fault.rawValue) }
        redactor.collect(response.headers, into: &flight.secrets)
        flight.exchange.responseBody = redactor.body(response.body, headers: response.headers, secrets: &flight.secrets)
        flight.exchange.responseHeaders = redactor.headers(response.headers, secrets: flight.secrets)
        let secrets = flight.secrets
        if secrets.values.count > flight.knownSecrets {
            // Values first met here (in the response, or in this request) are the session's from now on, and go out
            // of what this exchange stored before they were known.
            state.withLock { $0.secrets.formUnion(secrets) }
            flight.exchange.url = secrets.scrubbed(flight.exchange.url)
            flight.exchange.requestHeaders = flight.exchange.requestHeaders.map {
                Exchange.Header(name: $0.name, value: secrets.scrubbed($0.value))
            }
            flight.exchange.requestBody = redactor.scrubbed(
                flight.exchange.requestBody, headers: flight.requestHeaders, secrets: secrets)
        }
        if !secrets.isEmpty {
            flight.exchange.note = flight.exchange.note.map { ExchangeNote(rawValue: secrets.scrubbed($0.rawValue)) }
        }
        if let upstreamMicroseconds {
            record(
                flight.exchange, query: secrets.scrubbed(flight.storedQuery), upstreamMicroseconds: upstreamMicroseconds
            )
        }
        if flight.exchange.matched, let mockBase = flight.mockBase {
            switch flight.decision.action {
            case .replay(_, _, let rewritten?): response = rewritten
            case .replay(let index, _, nil): response = rewrittenReply(index, response, mockBase: mockBase)
            default: rewriteURLs(&response, mockBase: mockBase)
            }
        }
        flight.exchange.durationMicroseconds = Int64((ContinuousClock.now - flight.clock).wholeMicroseconds)
        emit(.exchange(flight.exchange))
        return response
    }

    /// Carries out a decision that needs no upstream (``forward(_:to:exchange:)`` does the rest): the response,
    /// and what the exchange says of it (matched, a note).
    private func answer(
        _ action: RequestDecision.Action, to request: MockRequest, exchange: inout Exchange
    ) -> MockResponse {
        switch action {
        case .tooLarge(let limit):
            exchange.note = .requestBodyTooLarge
            return .text(413, "orchestrate: request body larger than mock.maximumBodyBytes (\(limit) bytes)")
        case .stub(let response):
            exchange.matched = true
            exchange.note = .stub
            return response
        case .replay(_, let response, _):
            exchange.matched = true
            return response
        case .forward(let upstream):
            exchange.note = .notForwarded
            return .text(500, "orchestrate: \(request.summary) was to be forwarded to \(upstream), and was not")
        case .unmatched(let miss):
            exchange.note = .nearMiss(miss.description)
            logger.warning("unmatched request in replay", metadata: ["mock.request": "\(request.summary)"])
            return .text(404, "orchestrate: \(miss)", headers: [("x-orchestrate-unmatched", "1")])
        case .noCassette(let path):
            exchange.note = .noCassette
            return .text(
                404,
                "orchestrate: no cassette at \(path) to replay \(request.summary) from; record it first (--mode record)",
                headers: [("x-orchestrate-unmatched", "1")])
        case .noStub:
            exchange.note = .noStub
            logger.warning("no stub answers a request", metadata: ["mock.request": "\(request.summary)"])
            return .text(
                404,
                "orchestrate: no stub answers \(request.summary) (\(exchange.mode.rawValue) mode; add one to mock.stubs or POST it to /__orchestrate/stubs)",
                headers: [("x-orchestrate-unmatched", "1")])
        case .refuse:
            let known = configuration.hosts.keys.sorted()
            let message =
                request.host.isEmpty
                ? "orchestrate: the first path component must be the host the app meant, as in /api.example.com/v1/items"
                : "orchestrate: host \"\(request.host)\" is not in mock.hosts of the configuration"
                    + (known.isEmpty ? " (no hosts are configured)" : " (configured: \(known.joined(separator: ", ")))")
                    + "; requests are only forwarded to configured hosts"
            exchange.note = .hostNotConfigured
            logger.warning(
                "refused a request to a host that is not configured", metadata: ["mock.host": "\(request.host)"])
            return .text(403, message)
        case .noSession:
            exchange.note = .noReplaySession
            return .text(500, "orchestrate: the mock server has no replay session")
        }
    }

    /// The URL the app meant: the upstream base with the request's path and query.
    static func originalURL(upstream: String, request: MockRequest) -> String {
        let base = upstream.hasSuffix("/") ? String(upstream.dropLast()) : upstream
        return "\(base)\(request.path)\(request.rawQuery.isEmpty ? "" : "?\(request.rawQuery)")"
    }

    func emit(_ event: MockEvent) {
        if let onEvent { onEvent(event) } else { continuation.yield(event) }
    }
}
