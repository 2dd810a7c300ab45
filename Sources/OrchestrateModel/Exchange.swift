import struct Foundation.Date

/// One request/response exchange as a mock server handled it, secrets already redacted.
public struct Exchange: Sendable, Equatable {
    public struct Header: Sendable, Equatable, Codable {
        public var name: String
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// 1-based order within the session (the attempt).
    public var sequence: Int
    public var mode: Mode
    /// Whether a recording or a stub answered (replay/mock), or the upstream did (record/live).
    public var matched: Bool
    /// The host the app addressed (the first path component of the mock URL).
    public var host: String
    public var method: String
    /// The original URL (`https://api.example.com/v1/x?y=1`), or the mock path for hosts not configured.
    public var url: String
    public var requestHeaders: [Header]
    public var requestBody: [UInt8]
    /// `nil` when no response was sent (a fault closed the connection).
    public var status: Int?
    public var responseHeaders: [Header]
    public var responseBody: [UInt8]
    public var startedAt: Date
    public var durationMicroseconds: Int64
    /// Why the exchange is unusual: a near miss, a refused host, an upstream error.
    public var note: String?
    /// The attempt whose session the exchange belongs to (an opaque label for the mock server).
    public var attemptID: Int64?
    /// The step that was open when the request arrived (its position in the attempt).
    public var stepPosition: Int?

    public init(
        sequence: Int, mode: Mode, matched: Bool, host: String, method: String, url: String, requestHeaders: [Header],
        requestBody: [UInt8], status: Int?, responseHeaders: [Header], responseBody: [UInt8], startedAt: Date,
        durationMicroseconds: Int64, note: String? = nil, attemptID: Int64? = nil, stepPosition: Int? = nil
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
