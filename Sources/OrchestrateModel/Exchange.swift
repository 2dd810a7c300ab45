import struct Foundation.Date

/// One request/response exchange as a mock server handled it, secrets already redacted.
package struct Exchange: Sendable, Equatable {
    package struct Header: Sendable, Equatable, Codable {
        package var name: String
        package var value: String

        package init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// 1-based order within the session (the attempt).
    package var sequence: Int
    package var mode: Mode
    /// Whether a recording or a stub answered (replay/mock), or the upstream did (record/live).
    package var matched: Bool
    /// The host the app addressed (the first path component of the mock URL).
    package var host: String
    package var method: String
    /// The original URL (`https://api.example.com/v1/x?y=1`), or the mock path for hosts not configured.
    package var url: String
    package var requestHeaders: [Header]
    package var requestBody: [UInt8]
    /// `nil` when no response was sent (a fault closed the connection).
    package var status: Int?
    package var responseHeaders: [Header]
    package var responseBody: [UInt8]
    package var startedAt: Date
    package var durationMicroseconds: Int64
    /// Why the exchange is unusual: a near miss, a refused host, an upstream error.
    package var note: ExchangeNote?
    /// The attempt whose session the exchange belongs to (an opaque label for the mock server).
    package var attemptID: Int64?
    /// The step that was open when the request arrived (its position in the attempt).
    package var stepPosition: Int?

    package init(
        sequence: Int, mode: Mode, matched: Bool, host: String, method: String, url: String, requestHeaders: [Header],
        requestBody: [UInt8], status: Int?, responseHeaders: [Header], responseBody: [UInt8], startedAt: Date,
        durationMicroseconds: Int64, note: ExchangeNote? = nil, attemptID: Int64? = nil, stepPosition: Int? = nil
    ) {
        self.sequence = sequence
        self.mode = mode
        self.matched = matched
        self.host = host
        self.method = method
        self.url = url
        self.requestHeaders = requestHeaders
        self.requestBody = requestBody
        self.status = status
        self.responseHeaders = responseHeaders
        self.responseBody = responseBody
        self.startedAt = startedAt
        self.durationMicroseconds = durationMicroseconds
        self.note = note
        self.attemptID = attemptID
        self.stepPosition = stepPosition
    }
}

/// Why an exchange is unusual, as the mock server says it: a stub answered, a host not configured, no cassette, a
/// near miss in replay (what differed), an upstream error, a fault it was told to make. Stored and shown as its text.
package struct ExchangeNote: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    package var rawValue: String

    package init(rawValue: String) {
        self.rawValue = rawValue
    }

    package static let stub = ExchangeNote(rawValue: "stub")
    package static let noStub = ExchangeNote(rawValue: "no stub")
    package static let notForwarded = ExchangeNote(rawValue: "not forwarded")
    package static let noCassette = ExchangeNote(rawValue: "no cassette")
    package static let noReplaySession = ExchangeNote(rawValue: "no replay session")
    package static let hostNotConfigured = ExchangeNote(rawValue: "host not configured")
    package static let requestBodyTooLarge = ExchangeNote(rawValue: "request body too large")

    /// A fault the session was told to make (`fault: reset`).
    package static func fault(_ name: String) -> ExchangeNote { ExchangeNote(rawValue: "fault: \(name)") }
    /// The upstream did not answer (`upstream error: connection refused`).
    package static func upstreamError(_ reason: String) -> ExchangeNote {
        ExchangeNote(rawValue: "upstream error: \(reason)")
    }
    /// A replayed request no recorded one matched, and what the nearest one differed in.
    package static func nearMiss(_ description: String) -> ExchangeNote { ExchangeNote(rawValue: description) }

    package var description: String { rawValue }
}
