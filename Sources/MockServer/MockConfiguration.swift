import Foundation
import OrchestrateModel

/// The mock server's settings (the `mock:` section of orchestrate.yml).
package struct MockConfiguration: Sendable {
    /// The only hosts ever forwarded: host as the app addresses it → upstream base URL
    /// (`api.clinic.test: https://api.clinic.example`).
    package var hosts: [String: String] = [:]
    /// Request attributes that must be equal for a recorded exchange to answer a request.
    package var match: Set<MatchAttribute> = [.method, .path, .query, .body]
    /// Request headers (lower-case names) that must also be equal (`match: [header:accept-language]`).
    package var matchHeaders: [String] = []
    /// Query parameters left out of matching (cache busters).
    package var ignoredQuery: Set<String> = []
    /// JSON body fields left out of matching (`$.requestId`).
    package var ignoredJSON: [JSONPath] = []
    /// When identical requests outnumber their recordings: repeat the last recording (default) or fail.
    package var repeatLast = true
    /// Request and response bodies above this are cut (the exchange says so).
    package var maximumBodyBytes = 8 << 20
    /// A connection that sends nothing for this long while a request is incomplete gets 408 and is closed; one that is
    /// idle between requests is closed. A request waiting for its answer is never cut. Default 30 s
    /// (`mock.timeouts.read`).
    package var readTimeout: Duration = .seconds(30)
    /// Headers whose values never reach a cassette or the exchange log.
    package var redactedHeaders: Set<String> = ["authorization", "cookie", "set-cookie", "proxy-authorization"]
    /// JSON body fields whose values never reach a cassette or the exchange log (`$.password`).
    package var redactedJSON: [JSONPath] = []
    /// Secret values of the run (its secret environment values): replaced wherever they appear in an exchange.
    package var secrets = Secrets()
    /// Absolute URLs of configured hosts in responses are turned into mock URLs.
    package var rewriteURLs = true
    /// Answers in mock and hybrid mode (and in every mode, those added through the control API).
    package var stubs: [Stub] = []

    package init() {}

    package enum MatchAttribute: String, Sendable, Hashable, CaseIterable {
        case method, path, query, body
    }
}
