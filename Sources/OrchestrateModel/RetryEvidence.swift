/// When a failed attempt is retried: `retries.when: any` retries every failure; `evidence` only one that shows a cause
/// outside the test (``RetryEvidence``). A failure whose exchanges were all answered as recorded, or well by the live
/// backend, reproduces: running it again would only hide it.
package enum RetryWhen: String, Sendable, Hashable, Codable, CaseIterable {
    case any, evidence
}

/// What shows that a failed attempt failed for a cause outside the test, said in a line
/// (`GET api.x.test/v1/pay → 503 at step 3`).
package enum RetryEvidence {
    /// An answer at least this slow is a cause outside the test.
    package static let slowMicroseconds: Int64 = 5_000_000

    /// The attempt's own end: a crash, a timeout, an infrastructure error (its summary says which); `nil` for an exit
    /// status (the test said it failed) or a pass.
    package static func outcome(_ result: AttemptResult) -> String? {
        switch result.outcome {
        case .passed, .failed: nil
        case .timedOut: "the timeout"
        case .crashed: "the crash"
        case .infrastructureError: "the infrastructure error"
        }
    }

    /// Whether an exchange shows a cause outside the test: the backend itself answered it (live or record mode, not a
    /// stub, not the mock server's own refusal) with a 5xx or a 429, or took ``slowMicroseconds`` or longer; or it did not
    /// answer (a transport error).
    package static func isEvidence(_ exchange: Exchange) -> Bool {
        guard exchange.mode == .live || exchange.mode == .record else { return false }
        if exchange.note?.rawValue.hasPrefix("upstream error") == true { return true }
        guard exchange.matched, exchange.note == nil else { return false }
        if let status = exchange.status, status >= 500 || status == 429 { return true }
        return exchange.durationMicroseconds >= slowMicroseconds
    }

    /// The first exchange that is evidence (``isEvidence(_:)``) at the failing step, or anywhere in the attempt when no
    /// step is known to have failed; `nil` when none is.
    package static func exchange(in exchanges: [Exchange], failingStep: Int?) -> String? {
        let found = exchanges.first { exchange in
            isEvidence(exchange) && (failingStep == nil || exchange.stepPosition == failingStep)
        }
        return found.map(describe)
    }

    /// `GET api.x.test/v1/pay → 503 at step 3`: the host the app addressed and the path (never the query, which may
    /// carry a token), then what made it evidence.
    package static func describe(_ exchange: Exchange) -> String {
        var path = exchange.url
        if let scheme = path.firstRange(of: "://") {
            // The upstream's own address stays out: the app named the host.
            let rest = path[scheme.upperBound...]
            path = rest.firstIndex(of: "/").map { String(rest[$0...]) } ?? "/"
        } else if path.hasPrefix("/\(exchange.host)/") {
            path = String(path.dropFirst(exchange.host.utf8.count + 1))
        }
        if let query = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = String(path[..<query]) }
        path = exchange.host + path
        let what: String
        if let note = exchange.note, note.rawValue.hasPrefix("upstream error") {
            what = "no answer (\(note.rawValue))"
        } else if let status = exchange.status, status >= 500 || status == 429 {
            what = "\(status)"
        } else {
            let tenths = exchange.durationMicroseconds / 100_000
            what = "\(exchange.status.map(String.init) ?? "no answer") after \(tenths / 10).\(tenths % 10) s"
        }
        return "\(exchange.method) \(path) → \(what)" + (exchange.stepPosition.map { " at step \($0)" } ?? "")
    }

    /// A bounded record of an attempt's exchanges that are evidence, as they happen: the first
    /// ``RetryEvidence/Notable/perStep`` of each step (so that an earlier step's many cannot crowd out the failing
    /// one's), ``RetryEvidence/Notable/capacity`` in all, their bodies and headers left out.
    package struct Notable: Sendable {
        package static let perStep = 2
        package static let capacity = 64
        package private(set) var exchanges: [Exchange] = []

        package init() {}

        package mutating func note(_ exchange: Exchange) {
            guard exchanges.count < Self.capacity, RetryEvidence.isEvidence(exchange),
                exchanges.count(where: { $0.stepPosition == exchange.stepPosition }) < Self.perStep
            else { return }
            var kept = exchange
            kept.requestHeaders = []
            kept.requestBody = []
            kept.responseHeaders = []
            kept.responseBody = []
            exchanges.append(kept)
        }
    }
}
