/// The tables of the network log, in the order a batch writes them.
enum LogTable: String, CaseIterable, Sendable {
    case payloads, steps, exchanges

    /// The columns a row in COPY text has, in its order, with their types.
    var columns: [(name: String, type: String)] {
        switch self {
        case .payloads: [("digest", "bytea"), ("content", "bytea")]
        case .steps:
            [
                ("attempt_id", "bigint"), ("position", "integer"), ("keyword", "text"), ("name", "text"),
                ("status", "text"), ("started_at", "timestamptz"), ("finished_at", "timestamptz"), ("error", "text"),
            ]
        case .exchanges:
            [
                ("attempt_id", "bigint"), ("sequence", "integer"), ("mode", "text"), ("matched", "boolean"),
                ("host", "text"), ("method", "text"), ("url", "text"), ("request_headers_digest", "bytea"),
                ("request_body_digest", "bytea"), ("status", "integer"), ("response_headers_digest", "bytea"),
                ("response_body_digest", "bytea"), ("started_at", "timestamptz"), ("duration_us", "bigint"),
                ("note", "text"), ("step_position", "integer"),
            ]
        }
    }

    /// The statement that inserts rows given as one `text[]` per column ($1, $2, …, each field cast to its column's
    /// type). A payload already stored (by its digest) is left as it is. With `deduplicate` (rows sent before may be
    /// there), so is a step already there (by its attempt and position) and an exchange (by its attempt and sequence).
    func insert(deduplicate: Bool) -> String {
        let names = columns.map(\.name).joined(separator: ", ")
        let casts = columns.map { "u.\($0.name)::\($0.type) AS \($0.name)" }.joined(separator: ", ")
        let arrays = columns.indices.map { "$\($0 + 1)::text[]" }.joined(separator: ", ")
        let rows = "(SELECT \(casts) FROM unnest(\(arrays)) AS u(\(names))) AS i"
        switch (self, deduplicate) {
        case (.payloads, _), (.steps, true):
            return "INSERT INTO \(rawValue) (\(names)) SELECT \(names) FROM \(rows) ON CONFLICT DO NOTHING"
        case (.steps, false), (.exchanges, false):
            return "INSERT INTO \(rawValue) (\(names)) SELECT \(names) FROM \(rows)"
        case (.exchanges, true):
            return """
                INSERT INTO exchanges (\(names)) SELECT DISTINCT ON (i.attempt_id, i.sequence) \(names) FROM \(rows)
                WHERE NOT EXISTS (SELECT 1 FROM exchanges e WHERE e.attempt_id = i.attempt_id AND e.sequence = i.sequence)
                """
        }
    }
}
