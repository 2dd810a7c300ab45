import Foundation
import OrchestrateModel

/// What one attempt's mock server does: its mode and cassette, and the values a replay gives back.
/// A server starts a new session for every attempt, so nothing carries over.
package struct MockSession: Sendable, Equatable {
    package var mode: Mode
    /// The scenario's cassette: read in replay, written in record; `nil` in live and mock.
    package var cassettePath: String?
    package var scenarioID: String?
    package var seed: UInt32?
    /// ISO 8601, the frozen clock of the attempt.
    package var now: String?
    /// Carried into every exchange of the session, for the caller to file it.
    package var attemptID: Int64?

    package init(
        mode: Mode, cassettePath: String? = nil, scenarioID: String? = nil, seed: UInt32? = nil, now: String? = nil,
        attemptID: Int64? = nil
    ) {
        self.mode = mode
        self.cassettePath = cassettePath
        self.scenarioID = scenarioID
        self.seed = seed
        self.now = now
        self.attemptID = attemptID
    }
}

/// A response the server sends.
package struct MockResponse: Sendable {
    package var status: Int
    package var headers: [(name: String, value: String)]
    package var body: [UInt8]
    /// Waited before the answer goes out.
    package var delay: Duration? = nil
    package var fault: Fault? = nil

    static func text(_ status: Int, _ message: String, headers: [(name: String, value: String)] = []) -> MockResponse {
        MockResponse(
            status: status, headers: [("content-type", "text/plain; charset=utf-8")] + headers,
            body: Array("\(message)\n".utf8))
    }

    static func jsonValue(_ status: Int, _ value: JSONValue) -> MockResponse {
        encoded(status, value)
    }

    static func encoded(_ status: Int, _ value: some Encodable) -> MockResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        return MockResponse(status: status, headers: [("content-type", "application/json")], body: Array(data))
    }
}

/// Headers that belong to one connection (RFC 9110 §7.6.1), plus the framing headers each side sets
/// itself: never forwarded upstream, never sent to the app as they were received (the response writer
/// sets its own Content-Length), never part of a recorded request.
enum HopByHop {
    static let names: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade",
        "proxy-authenticate", "proxy-authorization", "content-length", "host",
    ]

    static func contains(_ name: String) -> Bool { names.contains(name.lowercasedASCII) }
}

extension String {
    /// Lowercased, without a copy when it already is (header names, on every request): ASCII letters only, as in
    /// HTTP field names; anything else goes through `lowercased()`.
    var lowercasedASCII: String {
        utf8.contains { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) || $0 >= 0x80 } ? lowercased() : self
    }

    /// Whether this equals `lowercase` (all lowercase) but for ASCII case: a header name compared without a lowercased
    /// copy.
    func equalsIgnoringASCIICase(_ lowercase: String) -> Bool {
        utf8.count == lowercase.utf8.count
            && zip(utf8, lowercase.utf8).allSatisfy {
                $0 == $1 || ($0 &+ 0x20 == $1 && (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0))
            }
    }
}

extension Array where Element == (name: String, value: String) {
    /// The first value of the header named `lowercaseName` (given all lowercase; the list's names in any case).
    func value(named lowercaseName: String) -> String? {
        first { $0.name.equalsIgnoringASCIICase(lowercaseName) }?.value
    }
}
