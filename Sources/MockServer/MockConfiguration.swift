import Foundation

/// The mock server's settings (the `mock:` section of orchestrate.yml).
public struct MockConfiguration: Sendable {
    /// The only hosts ever forwarded: host as the app addresses it → upstream base URL
    /// (`api.clinic.test: https://api.clinic.example`).
    public var hosts: [String: String] = [:]
    /// Request attributes that must be equal for a recorded exchange to answer a request.
    public var match: Set<MatchAttribute> = [.method, .path, .query, .body]
    /// Request headers (lower-case names) that must also be equal (`match: [header:accept-language]`).
    public var matchHeaders: [String] = []
    /// Query parameters left out of matching (cache busters).
    public var ignoredQuery: Set<String> = []
    /// JSON body fields left out of matching (`$.requestId`).
    public var ignoredJSON: [JSONPath] = []
    /// When identical requests outnumber their recordings: repeat the last recording (default) or fail.
    public var repeatLast = true
    /// Request and response bodies above this are cut (the exchange says so).
    public var maximumBodyBytes = 8 << 20
    /// Headers whose values never reach a cassette or the exchange log.
    public var redactedHeaders: Set<String> = ["authorization", "cookie", "set-cookie", "proxy-authorization"]
    /// JSON body fields whose values never reach a cassette or the exchange log (`$.password`).
    public var redactedJSON: [JSONPath] = []
    /// Absolute URLs of configured hosts in responses are turned into mock URLs.
    public var rewriteURLs = true
    /// Answers in mock and hybrid mode (and in every mode, those added through the control API).
    public var stubs: [Stub] = []

    public init() {}

    public enum MatchAttribute: String, Sendable, Hashable, CaseIterable {
        case method, path, query, body
    }
}
