/// The tables of the network log, in the order a batch writes them.
enum LogTable: String, CaseIterable, Sendable {
    case payloads, steps, exchanges

    var columns: [String] {
        switch self {
        case .payloads: ["digest", "content"]
        case .steps: ["attempt_id", "position", "keyword", "name", "status", "started_at", "finished_at", "error"]
        case .exchanges:
            [
                "attempt_id", "sequence", "mode", "matched", "host", "method", "url", "request_headers_digest",
                "request_body_digest",
                "status", "response_headers_digest", "response_body_digest", "started_at", "duration_us", "note",
                "step_position",
            ]
        }
    }

    /// The statement that moves the rows of the temporary table `incoming` into this table, leaving out those already
    /// there: a payload by its digest, a step by its attempt and position, an exchange by its attempt and sequence.
    func keepNew(from incoming: String) -> String {
        let columns = self.columns.joined(separator: ", ")
        switch self {
        case .payloads, .steps:
            return "INSERT INTO \(rawValue) (\(columns)) SELECT \(columns) FROM \(incoming) ON CONFLICT DO NOTHING"
        case .exchanges:
            return """
                INSERT INTO exchanges (\(columns)) SELECT DISTINCT ON (i.attempt_id, i.sequence) \(self.columns.map { "i.\($0)" }.joined(separator: ", "))
                FROM \(incoming) i
                WHERE NOT EXISTS (SELECT 1 FROM exchanges e WHERE e.attempt_id = i.attempt_id AND e.sequence = i.sequence)
                """
        }
    }
}
