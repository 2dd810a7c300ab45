import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The worker's mock server as test code talks to it (`/__orchestrate/…`): step events, so that every
/// exchange is filed under the step that made it and steps get timings in PostgreSQL, and recorded random
/// values, given back in replay.
///
/// Outside a run (no `ORCHESTRATE_CONTROL_URL`) step events go nowhere and random values are the fresh ones.
public struct OrchestrateControl: Sendable {
    public let environment: OrchestrateEnvironment
    private let session: URLSession

    public init(environment: OrchestrateEnvironment = .current) {
        self.environment = environment
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 10
        self.session = URLSession(configuration: configuration)
    }

    /// Opens a step (a step still open ends as unfinished); exchanges from now on belong to it.
    public func stepStarted(keyword: String, name: String) async throws {
        _ = try await post("steps", StepEvent(name: name, keyword: keyword))
    }

    /// Ends the open step: `passed`, `failed` (with the error), `undefined`…
    public func stepFinished(status: String, error: String? = nil) async throws {
        _ = try await post("steps", StepEvent(status: status, error: error))
    }

    /// Reports a whole step at once, such as one skipped after a failure.
    public func step(
        keyword: String, name: String, status: String, startedAt: Date, finishedAt: Date, error: String? = nil
    ) async throws {
        let format = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        _ = try await post(
            "steps",
            StepEvent(
                name: name, keyword: keyword, status: status, error: error,
                startedAt: startedAt.formatted(format), finishedAt: finishedAt.formatted(format)
            ))
    }

    /// A value that must be fresh when a scenario is recorded (an e-mail address nobody registered yet) and the
    /// same when it is replayed, so that the replayed requests match the recorded ones. In record and live mode
    /// `make()`'s value is kept with the cassette; in replay the recorded one comes back.
    ///
    /// ```swift
    /// let email = try await control.recordedRandom("email") { "user-\(UUID().uuidString.prefix(8))@example.test" }
    /// ```
    public func recordedRandom(_ key: String, _ make: () -> String) async throws -> String {
        let proposed = make()
        guard environment.controlURL != nil else { return proposed }
        let reply = try await post("randoms", RandomValue(key: key, value: proposed))
        return try JSONDecoder().decode(RandomValue.self, from: reply).value
    }

    private struct StepEvent: Encodable {
        var name: String?
        var keyword: String?
        var status: String?
        var error: String?
        var startedAt: String?
        var finishedAt: String?
    }

    private struct RandomValue: Codable {
        var key: String
        var value: String
    }

    /// POSTs JSON to the control API; an answer other than 2xx is an error that quotes it.
    private func post(_ endpoint: String, _ body: some Encodable) async throws -> Data {
        guard let control = environment.controlURL else { return Data() }
        let url = control.appendingPathComponent(endpoint)
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONEncoder().encode(body)
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await session.data(for: request)
        } catch {
            throw OrchestrateKitError(
                .control,
                "orchestrate's control API at \(url.absoluteString) cannot be reached: \(error.localizedDescription)")
        }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard (200..<300).contains(status) else {
            let text = String(decoding: data.prefix(500), as: UTF8.self)
            throw OrchestrateKitError(
                .control, "orchestrate's control API answered \(status) to POST \(url.absoluteString): \(text)")
        }
        return data
    }
}
