/// The tables of the network log, in the order a batch writes them.
enum LogTable: String, CaseIterable, Sendable {
    case payloads, steps, exchanges

    var columns: [String] {
        switch self {
        case .payloads: ["digest", "content"]
        case .steps: ["attempt_id", "position", "keyword", "name", "status", "started_at", "finished_at", "error"]
        case .exchanges:
            [
                "attempt_id", "sequence", "mode", "matched", "host", "method", "url", "request_headers_digest", "request_body_digest",
                "status", "response_headers_digest", "response_body_digest", "started_at", "duration_us", "note", "step_position",
            ]
        }
    }
}
