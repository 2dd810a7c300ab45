import Foundation
import OrchestrateModel

/// What changed on the network between a recording and a live attempt: requests that are new or missing, status
/// changes, JSON field changes with their paths and values, header changes that matter, latency outliers — each
/// tied to the step of the live attempt (or, for a missing request, of the recording) where it happened.
package struct NetworkDiff: Sendable {
    /// Response headers whose change is evidence; the rest (Date, Server, ETag, lengths…) change on every answer.
    package var headers: Set<String> = [
        "content-type", "content-encoding", "location", "cache-control", "retry-after", "www-authenticate",
    ]
    /// A live answer this many times slower than recorded, and at least `latencyMinimumMilliseconds` slower, is an
    /// outlier.
    package var latencyFactor = 3.0
    package var latencyMinimumMilliseconds = 250.0
    /// JSON paths of response bodies whose changes are no evidence (`mock.ignore.json`).
    package var ignores: @Sendable (String) -> Bool = { _ in false }

    package init() {}

    /// Each live exchange with the recorded one it pairs with — the nth request with the same method, host, path and
    /// query with the nth recorded one; `nil` for a request the recording does not have — and the recorded exchanges
    /// no live one took, in recorded order.
    package static func pairs(
        recorded: [Exchange], live: [Exchange]
    ) -> (pairs: [(recorded: Exchange?, live: Exchange)], missing: [Exchange]) {
        var pending: [String: [Int]] = [:]
        for (index, exchange) in recorded.enumerated() { pending[requestKey(exchange), default: []].append(index) }
        var pairs: [(recorded: Exchange?, live: Exchange)] = []
        for exchange in live {
            let key = requestKey(exchange)
            guard let index = pending[key]?.first else {
                pairs.append((nil, exchange))
                continue
            }
            pending[key]?.removeFirst()
            pairs.append((recorded[index], exchange))
        }
        return (pairs, pending.values.joined().sorted().map { recorded[$0] })
    }

    /// The differences, in the live attempt's order (missing requests last, in the recording's order).
    /// - Parameters:
    ///   - recorded: the cassette's exchanges, in recorded order.
    ///   - live: the live attempt's exchanges, in order.
    ///   - noise: keys (``NetworkDifference/key``) of differences seen between passing runs, which are not evidence.
    package func differences(recorded: [Exchange], live: [Exchange], noise: Set<String> = []) -> [NetworkDifference] {
        let (pairs, missing) = Self.pairs(recorded: recorded, live: live)
        var found: [NetworkDifference] = []
        for (before, exchange) in pairs {
            guard let before else {
                found.append(NetworkDifference(.newRequest, exchange, live: exchange.status.map(String.init)))
                continue
            }
            found += compare(before, exchange)
        }
        for exchange in missing {
            found.append(NetworkDifference(.missingRequest, exchange, recorded: exchange.status.map(String.init)))
        }
        return found.filter { !noise.contains($0.key) }
    }

    private func compare(_ recorded: Exchange, _ live: Exchange) -> [NetworkDifference] {
        var found: [NetworkDifference] = []
        if recorded.status != live.status {
            found.append(
                NetworkDifference(
                    .status, live, recorded: recorded.status.map(String.init) ?? "none",
                    live: live.status.map(String.init) ?? "none"))
        }
        for name in headers.sorted() {
            let before = recorded.responseHeaders.first { $0.name.lowercased() == name }?.value
            let after = live.responseHeaders.first { $0.name.lowercased() == name }?.value
            if before != after {
                found.append(
                    NetworkDifference(.header, live, path: name, recorded: before ?? "absent", live: after ?? "absent"))
            }
        }
        if recorded.responseBody != live.responseBody {
            if let before = Self.json(recorded.responseBody), let after = Self.json(live.responseBody) {
                found += JSONDiff.changes(before, after).filter { !ignores($0.path) }.map {
                    NetworkDifference(
                        .body, live, path: $0.path, recorded: JSONDiff.render($0.before),
                        live: JSONDiff.render($0.after))
                }
            } else {
                found.append(
                    NetworkDifference(
                        .body, live, recorded: "\(recorded.responseBody.count) bytes",
                        live: "\(live.responseBody.count) bytes"))
            }
        }
        let before = Double(recorded.durationMicroseconds) / 1000
        let after = Double(live.durationMicroseconds) / 1000
        if after >= before * latencyFactor, after - before >= latencyMinimumMilliseconds {
            found.append(
                NetworkDifference(
                    .latency, live, recorded: "\(Int(before.rounded())) ms", live: "\(Int(after.rounded())) ms"))
        }
        return found
    }

    /// Method, host, path and query with its items sorted: what makes two requests "the same request".
    static func requestKey(_ exchange: Exchange) -> String {
        "\(exchange.method) \(target(exchange))"
    }

    /// `api.example.com/v1/x?a=1&b=2` (query items sorted): the host as the app addressed it, the original URL's path
    /// and query (or the mock path of a host not configured).
    package static func target(_ exchange: Exchange) -> String {
        guard let components = URLComponents(string: exchange.url), let host = components.host else {
            return exchange.url
        }
        let query = (components.percentEncodedQuery ?? "").split(separator: "&").sorted().joined(separator: "&")
        return (exchange.host.isEmpty ? host : exchange.host) + components.percentEncodedPath
            + (query.isEmpty ? "" : "?" + query)
    }

    static func json(_ body: [UInt8]) -> JSONValue? {
        guard let first = body.first(where: { ![0x20, 0x0a, 0x0d, 0x09].contains($0) }),
            first == UInt8(ascii: "{") || first == UInt8(ascii: "[")
        else { return nil }
        return try? JSONDecoder().decode(JSONValue.self, from: Data(body))
    }
}

extension NetworkDifference {
    init(_ kind: Kind, _ exchange: Exchange, path: String? = nil, recorded: String? = nil, live: String? = nil) {
        self.init(
            kind: kind, request: "\(exchange.method) \(NetworkDiff.target(exchange))", path: path, recorded: recorded,
            live: live,
            step: exchange.stepPosition)
    }
}
