import Foundation
import OrchestrateModel

/// Secrets out of everything a mock server writes anywhere (cassette, network log, messages): the values of the
/// configured headers (`mock.redact.headers`, besides Authorization and cookies) and JSON fields (`mock.redact.json`),
/// through the body's content coding. The app itself still gets the real values.
struct Redactor: Sendable {
    let configuration: MockConfiguration

    static let redactedValue = "[REDACTED]"

    /// The headers as they are stored: redacted values replaced.
    func headers(_ headers: [(name: String, value: String)]) -> [Exchange.Header] {
        headers.map { header in
            Exchange.Header(
                name: header.name, value: configuration.redactedHeaders.contains(header.name.lowercasedASCII) ? Self.redactedValue : header.value)
        }
    }

    /// The body with the configured JSON fields replaced, through its content coding; the body itself when it has none.
    func body(_ body: [UInt8], headers: [(name: String, value: String)]) -> [UInt8] {
        guard !configuration.redactedJSON.isEmpty, !body.isEmpty else { return body }
        let coding = ContentCoding.coding(of: headers)
        return ContentCoding.transform(body, coding: coding, maximumBytes: configuration.maximumBodyBytes) { decoded in
            guard var document = try? JSONDecoder().decode(JSONValue.self, from: Data(decoded)) else { return nil }
            var found = false
            for path in configuration.redactedJSON {
                found = path.apply(to: &document) { _ in .string(Self.redactedValue) } || found
            }
            guard found else { return nil }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            return (try? encoder.encode(document)).map(Array.init)
        } ?? body
    }
}
