import Foundation
import OrchestrateModel

/// One attempt's session of a mock server, as a value: its mode and cassette, the stubs and collections, what replay
/// has used, the steps the test reported, the recording under way. The server holds it behind a lock and takes it once
/// per request to ``decide(_:stored:bodyTooLarge:mockBase:)`` what answers; that decision does no I/O, so it is tested
/// without sockets.
package struct SessionState: Sendable {
    package private(set) var session: MockSession
    let configuration: MockConfiguration
    var matcher: RequestMatcher?
    /// The cassette's responses, decoded once per session (replay serves them many times).
    var replies: [MockResponse] = []
    /// Replies with their URLs rewritten, by reply and mock base URL.
    var rewrittenReplies: [ReplyKey: MockResponse] = [:]
    var recording: Cassette?
    /// How often each identical request was answered from the cassette (by its first entry).
    var used: [Int: Int] = [:]
    /// The last exchange's sequence number.
    var sequence = 0
    /// Replay without a cassette: a scenario that makes no requests needs none; requests are told where it was
    /// expected.
    var missingCassette: String?
    package var stubs: StubBook
    package private(set) var steps: [Step] = []
    /// The position of the step the test has opened and not ended.
    var openStep: Int?
    /// Recorded values: from the cassette in replay, collected in record and live.
    package private(set) var randoms: [String: String] = [:]
    /// The secret values met so far (redacted headers and JSON fields), with the run's own
    /// (``MockConfiguration/secrets``): replaced wherever they appear in the session's exchanges, steps and output.
    package var secrets: Secrets

    struct ReplyKey: Hashable {
        var index: Int
        var base: String
    }

    /// A session with no cassette read yet (live, mock, or nothing begun).
    package init(session: MockSession = MockSession(mode: .replay), configuration: MockConfiguration) {
        self.session = session
        self.configuration = configuration
        secrets = configuration.secrets
        stubs = StubBook(configured: configuration.stubs)
        if session.mode == .record, let path = session.cassettePath {
            recording = Cassette(
                path: path, extras: CassetteExtras(scenarioID: session.scenarioID, seed: session.seed, now: session.now)
            )
        }
    }

    /// A replay (or hybrid) session answering from `cassette`; its frozen clock and seed become the session's, so that
    /// the test computes the requests it made when it was recorded.
    package init(session: MockSession, replaying cassette: Cassette, configuration: MockConfiguration) {
        var session = session
        session.now = cassette.extras.now ?? session.now
        session.seed = cassette.extras.seed ?? session.seed
        self.init(session: session, configuration: configuration)
        replies = cassette.entries.map { entry in
            MockResponse(
                status: entry.response.status, headers: entry.response.headers.map { (name: $0.name, value: $0.value) },
                body: entry.responseBody)
        }
        randoms = cassette.extras.randoms
        matcher = RequestMatcher(entries: cassette.entries, configuration: configuration)
    }

    /// A replay session whose cassette does not exist: requests are answered with where it was expected.
    package init(session: MockSession, missingCassette path: String, configuration: MockConfiguration) {
        self.init(session: session, configuration: configuration)
        missingCassette = path
        matcher = RequestMatcher(entries: [], configuration: configuration)
    }

    /// Whether recordings answer: in replay, and in hybrid when the session has a cassette.
    var replays: Bool { session.mode == .replay || (session.mode == .hybrid && matcher != nil) }

    /// What answers one request, decided from the session alone, with the exchange's place in it (its sequence number,
    /// the step open when it arrived). Counts the call of the stub or recording that answers.
    ///
    /// - Parameters:
    ///   - stored: the request as it is stored, secrets redacted: what replay compares with recordings (which hold
    ///     redacted requests).
    ///   - bodyTooLarge: the body went past ``MockConfiguration/maximumBodyBytes`` and was cut.
    ///   - mockBase: the server's URL as the app addresses it, when replies are rewritten: a reply rewritten for it
    ///     before comes with the decision.
    package mutating func decide(
        _ request: MockRequest, stored: MockRequest, bodyTooLarge: Bool, mockBase: String? = nil
    ) -> RequestDecision {
        sequence += 1
        let upstream = configuration.hosts[request.host]
        var decision = RequestDecision(
            action: .tooLarge(limit: configuration.maximumBodyBytes), session: session, sequence: sequence,
            step: openStep, upstream: upstream
        )
        guard !bodyTooLarge else { return decision }
        let stubsFirst = session.mode == .mock || session.mode == .hybrid
        if let stubbed = stubs.answer(request, session: session, runtimeOnly: !stubsFirst) {
            decision.action = .stub(stubbed)
            return decision
        }
        guard let upstream else {
            decision.action = stubsFirst ? .noStub : .refuse
            return decision
        }
        if replays {
            if let missingCassette {
                decision.action = .noCassette(path: missingCassette)
                return decision
            }
            switch matcher?.match(stored, used: &used) {
            case .success(let index)?:
                decision.action = .replay(
                    index: index, replies[index],
                    rewritten: mockBase.flatMap { rewrittenReplies[ReplyKey(index: index, base: $0)] })
            case .failure(let miss)?: decision.action = .unmatched(miss)
            case nil: decision.action = .noSession
            }
            return decision
        }
        switch session.mode {
        case .record, .live, .hybrid: decision.action = .forward(upstream: upstream)
        case .replay, .mock, .compare: decision.action = .noStub
        }
        return decision
    }
}

/// A step as a test reports it through the control API (`POST /__orchestrate/steps`).
package struct StepReport: Sendable {
    package var keyword: String?
    package var name: String?
    /// `started` (or no status and no end) opens a step; `passed`, `failed`… end the open one, or with a name and an
    /// end report a whole step.
    package var status: StepStatus?
    package var startedAt: Date?
    package var finishedAt: Date?
    package var error: String?

    package init(
        keyword: String? = nil, name: String? = nil, status: StepStatus? = nil, startedAt: Date? = nil,
        finishedAt: Date? = nil, error: String? = nil
    ) {
        self.keyword = keyword
        self.name = name
        self.status = status
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.error = error
    }
}

extension SessionState {
    /// Records a step the test reported, at `now` when it gives no time. Returns the step that ended (to be stored:
    /// the one this report ends or reports whole, or one still open that a new step ends unfinished) and the position
    /// of the step reported.
    package mutating func report(_ report: StepReport, at now: Date) -> (ended: Step?, position: Int) {
        // Without a status: a whole step when it says when it finished, else the start of one.
        let status = report.status ?? (report.finishedAt == nil ? .started : .passed)
        if status == .started {
            var ended: Step?
            if let open = openStep {
                steps[open - 1].status = .unfinished
                steps[open - 1].finishedAt = now
                ended = steps[open - 1]
            }
            let step = Step(
                position: steps.count + 1, keyword: report.keyword ?? "", name: report.name ?? "", status: .started,
                startedAt: report.startedAt ?? now)
            steps.append(step)
            openStep = step.position
            return (ended, step.position)
        }
        // Ends the open step, unless it is a whole step of its own (named, with its end).
        if let open = openStep, report.name == nil || report.finishedAt == nil {
            steps[open - 1].status = status
            steps[open - 1].finishedAt = report.finishedAt ?? now
            steps[open - 1].error = report.error
            openStep = nil
            return (steps[open - 1], open)
        }
        let step = Step(
            position: steps.count + 1, keyword: report.keyword ?? "", name: report.name ?? "", status: status,
            startedAt: report.startedAt ?? now, finishedAt: report.finishedAt ?? now, error: report.error)
        steps.append(step)
        return (step, step.position)
    }

    /// A recorded random value: in replay the recording's (`replayed`), otherwise the proposed one, kept for the
    /// cassette.
    package mutating func random(_ key: String, proposed: String) -> (value: String, replayed: Bool) {
        if replays, let recorded = randoms[key] { return (recorded, true) }
        if !replays { randoms[key] = proposed }
        return (proposed, false)
    }
}

/// What a mock server does with one request (``SessionState/decide(_:stored:bodyTooLarge:mockBase:)``), and where the
/// exchange belongs.
package struct RequestDecision: Sendable {
    package var action: Action
    /// The session as it was when the request arrived (its mode, attempt).
    package var session: MockSession
    /// The exchange's number in the session, in the order requests arrived.
    package var sequence: Int
    /// The step open when the request arrived.
    package var step: Int?
    /// The upstream of the request's host, when `mock.hosts` has it.
    package var upstream: String?

    package enum Action: Sendable {
        /// The body went past the limit: 413.
        case tooLarge(limit: Int)
        /// A stub's answer (one added at run time, in any mode; a configured one in mock and hybrid mode).
        case stub(MockResponse)
        /// The recording at `index` in the cassette, and its rewritten form for the request's mock URL when the session
        /// has one already.
        case replay(index: Int, MockResponse, rewritten: MockResponse?)
        /// To the configured upstream (record, live, hybrid without a recording); record keeps the exchange.
        case forward(upstream: String)
        /// No recording matches: 404 with the closest one.
        case unmatched(RequestMatcher.NearMiss)
        /// Replay with no cassette: 404 saying where it was expected.
        case noCassette(path: String)
        /// Nothing answers in mock (or hybrid) mode: 404.
        case noStub
        /// The host is not in `mock.hosts`: 403, never forwarded.
        case refuse
        /// No session has begun (a request between attempts): 500.
        case noSession
    }
}
