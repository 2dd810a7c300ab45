import Foundation

/// `--format table|json`.
package enum OutputFormat: String, Sendable, CaseIterable {
    case table
    case json

    /// Stable field names (snake_case), sorted keys, ISO 8601 dates.
    static func json<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
