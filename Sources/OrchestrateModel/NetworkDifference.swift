/// One difference between a recording and a live attempt.
package struct NetworkDifference: Sendable, Equatable, Codable, CustomStringConvertible {
    package enum Kind: String, Sendable, Codable {
        case newRequest = "new-request", missingRequest = "missing-request", status, header, body, latency
        /// A request the replay could not answer from the recording (`live` holds the near miss).
        case unmatched
    }

    package var kind: Kind
    /// `POST api.clinic.test/v1/chat/messages`.
    package var request: String
    /// The JSON path of a body change, the header's name.
    package var path: String?
    package var recorded: String?
    package var live: String?
    /// Where it happened: the step's position in the live attempt (the recording's, for a missing request).
    package var step: Int?

    /// The step's text (`When I tell the bot "hello"`), where known.
    package var stepName: String?

    package init(
        kind: Kind, request: String, path: String? = nil, recorded: String? = nil, live: String? = nil,
        step: Int? = nil, stepName: String? = nil
    ) {
        self.kind = kind
        self.request = request
        self.path = path
        self.recorded = recorded
        self.live = live
        self.step = step
        self.stepName = stepName
    }

    /// What identifies the difference across runs (values left out): noise is matched by it.
    package var key: String { "\(kind.rawValue) \(request)\(path.map { " \($0)" } ?? "")" }

    /// `POST api.clinic.test/v1/chat/messages $.options[0].label: "OK" → "SURE"`.
    package var description: String {
        switch kind {
        case .newRequest: "\(request): new request (live answered \(live ?? "nothing"))"
        case .missingRequest: "\(request): recorded, not made live"
        case .status: "\(request): status \(recorded ?? "") → \(live ?? "")"
        case .header: "\(request) header \(path ?? ""): \(recorded ?? "") → \(live ?? "")"
        case .body: "\(request) \(path ?? "body"): \(recorded ?? "") → \(live ?? "")"
        case .latency: "\(request): \(recorded ?? "") → \(live ?? "") (slower)"
        case .unmatched: "\(request): not in the recording (\(live ?? "no near miss"))"
        }
    }

    /// `step 2 “When I tell the bot …”`, or `step 2`, or `nil` outside steps.
    package var place: String? {
        guard let step else { return nil }
        return stepName.map { "step \(step) “\($0)”" } ?? "step \(step)"
    }

    /// The keys of differences between passing runs: those fields change by themselves (ids, timestamps).
    package static func noise(_ passingRuns: [[NetworkDifference]]) -> Set<String> {
        Set(passingRuns.joined().map(\.key))
    }
}
