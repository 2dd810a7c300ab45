import Foundation
import OrchestrateModel

/// Secrets out of everything a mock server writes anywhere (cassette, network log, messages): the values of the
/// configured headers (`mock.redact.headers`, besides Authorization and cookies) and JSON fields (`mock.redact.json`),
/// through the body's content coding, and then every one of those values wherever else it appears in the exchange
/// (an upstream that echoes a token back, a password in a URL), with the run's secret environment values
/// (``MockConfiguration/secrets``). The app itself still gets the real values.
struct Redactor: Sendable {
    let configuration: MockConfiguration

    /// The names of the configured JSON fields, for bodies that are meant to be JSON and do not parse.
    private let fieldNames: [[UInt8]]

    init(configuration: MockConfiguration) {
        self.configuration = configuration
        fieldNames = Set(configuration.redactedJSON.compactMap(\.lastName)).sorted().map { Array($0.utf8) }
    }

    /// The request as it is stored — what is written anywhere, and what replay compares with recordings — with its
    /// headers as the exchange keeps them: secrets redacted by name (headers, JSON fields), their values added to
    /// `secrets`, then every secret value replaced in the path, query, headers and body. A request with no header
    /// redacted by name and no JSON field configured, in a session that knows no secret, is stored as it came.
    func stored(_ request: MockRequest, secrets: inout Secrets) -> (request: MockRequest, headers: [Exchange.Header]) {
        let plain =
            configuration.redactedJSON.isEmpty
            && !request.headers.contains { configuration.redactedHeaders.contains($0.name.lowercasedASCII) }
        guard !plain || !secrets.isEmpty else {
            return (request, request.headers.map { Exchange.Header(name: $0.name, value: $0.value) })
        }
        collect(request.headers, into: &secrets)
        var stored = request
        stored.body = body(request.body, headers: request.headers, secrets: &secrets)
        stored.path = secrets.scrubbed(request.path)
        stored.rawQuery = secrets.scrubbed(request.rawQuery)
        let headers = self.headers(request.headers, secrets: secrets)
        stored.headers = headers.map { (name: $0.name, value: $0.value) }
        return (stored, headers)
    }

    /// Adds the values of redacted headers to `secrets`: the whole value, the credentials after an authorization
    /// scheme (`Bearer …`), and each cookie's value.
    func collect(_ headers: [(name: String, value: String)], into secrets: inout Secrets) {
        for header in headers where configuration.redactedHeaders.contains(header.name.lowercasedASCII) {
            secrets.insert(header.value)
            let name = header.name.lowercasedASCII
            if name == "cookie" || name == "set-cookie" {
                // Set-Cookie's first pair is the cookie; what follows are its attributes.
                let pairs = header.value.split(separator: ";")
                for pair in name == "cookie" ? pairs[...] : pairs.prefix(1) {
                    if let equals = pair.firstIndex(of: "=") {
                        secrets.insert(String(pair[pair.index(after: equals)...]))
                    }
                }
            } else if let space = header.value.firstIndex(of: " ") {
                secrets.insert(
                    String(header.value[header.value.index(after: space)...]).trimmingCharacters(in: .whitespaces))
            }
        }
    }

    /// The headers as they are stored: redacted ones replaced, then every secret value in the others.
    func headers(_ headers: [(name: String, value: String)], secrets: Secrets) -> [Exchange.Header] {
        headers.map { header in
            Exchange.Header(
                name: header.name,
                value: configuration.redactedHeaders.contains(header.name.lowercasedASCII)
                    ? Secrets.placeholder : secrets.scrubbed(header.value))
        }
    }

    /// The body as it is stored, through its content coding: the configured JSON fields replaced (textually when the
    /// body is meant to be JSON and does not parse), their values added to `secrets`, then every secret value replaced.
    /// The body itself when nothing in it is secret.
    func body(_ body: [UInt8], headers: [(name: String, value: String)], secrets: inout Secrets) -> [UInt8] {
        guard !body.isEmpty, !configuration.redactedJSON.isEmpty || !secrets.isEmpty else { return body }
        var found = secrets
        let changed = ContentCoding.transform(
            body, coding: ContentCoding.coding(of: headers), maximumBytes: configuration.maximumBodyBytes
        ) {
            decoded in
            var fields = redactFields(decoded, headers: headers, secrets: &found)
            if let scrubbed = found.scrubbed(fields ?? decoded) { fields = scrubbed }
            return fields
        }
        secrets = found
        return changed ?? body
    }

    /// The body with the secrets already known replaced (no field redaction), through its content coding.
    func scrubbed(_ body: [UInt8], headers: [(name: String, value: String)], secrets: Secrets) -> [UInt8] {
        guard !body.isEmpty, !secrets.isEmpty else { return body }
        return ContentCoding.transform(
            body, coding: ContentCoding.coding(of: headers), maximumBytes: configuration.maximumBodyBytes
        ) {
            secrets.scrubbed($0)
        } ?? body
    }

    /// The configured JSON fields of a decoded body replaced, their values added to `secrets`; `nil` when none is
    /// there.
    private func redactFields(
        _ decoded: [UInt8], headers: [(name: String, value: String)], secrets: inout Secrets
    ) -> [UInt8]? {
        guard !configuration.redactedJSON.isEmpty else { return nil }
        guard var document = try? JSONDecoder().decode(JSONValue.self, from: Data(decoded)) else {
            return Self.meantAsJSON(decoded, headers: headers) ? redactFieldsTextually(decoded, secrets: &secrets) : nil
        }
        var found = false
        for path in configuration.redactedJSON {
            found =
                path.apply(to: &document) { value in
                    for leaf in value.scalarTexts { secrets.insert(leaf) }
                    return .string(Secrets.placeholder)
                } || found
        }
        guard found else { return nil }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(document)).map(Array.init)
    }

    /// Whether a body is meant to be JSON: its media type says so, or it has none and starts like JSON.
    static func meantAsJSON(_ body: [UInt8], headers: [(name: String, value: String)]) -> Bool {
        if let type = headers.value(named: "content-type") {
            let media =
                type.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
            return media == "application/json" || media.hasSuffix("+json")
        }
        let first = body.first { ![0x20, 0x09, 0x0a, 0x0d].contains($0) }
        return first == UInt8(ascii: "{") || first == UInt8(ascii: "[")
    }

    /// JSON that does not parse (cut short, or broken): the value after every `"name":` of a configured field replaced
    /// — a string to its closing quote (or the end), anything else to the next `,` `}` `]` or white space — and added
    /// to `secrets`. `nil` when no such field is there.
    private func redactFieldsTextually(_ body: [UInt8], secrets: inout Secrets) -> [UInt8]? {
        var result: [UInt8] = []
        var position = 0
        var changed = false
        let quote = UInt8(ascii: "\"")
        let spaces: Set<UInt8> = [0x20, 0x09, 0x0a, 0x0d]
        while position < body.count {
            guard body[position] == quote,
                let name = fieldNames.first(where: { name in
                    let end = position + 1 + name.count
                    return end < body.count && body[end] == quote && body[(position + 1)..<end].elementsEqual(name)
                })
            else {
                result.append(body[position])
                position += 1
                continue
            }
            var cursor = position + name.count + 2
            while cursor < body.count, spaces.contains(body[cursor]) { cursor += 1 }
            guard cursor < body.count, body[cursor] == UInt8(ascii: ":") else {
                result.append(contentsOf: body[position..<cursor])
                position = cursor
                continue
            }
            cursor += 1
            while cursor < body.count, spaces.contains(body[cursor]) { cursor += 1 }
            result.append(contentsOf: body[position..<cursor])
            var end = cursor
            if cursor < body.count, body[cursor] == quote {
                end += 1
                while end < body.count, body[end] != quote {
                    end += body[end] == UInt8(ascii: "\\") ? 2 : 1
                }
                secrets.insert(String(decoding: body[(cursor + 1)..<min(end, body.count)], as: UTF8.self))
                end = min(end + 1, body.count)
            } else {
                while end < body.count, !spaces.contains(body[end]),
                    ![UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]")].contains(body[end])
                {
                    end += 1
                }
                secrets.insert(String(decoding: body[cursor..<end], as: UTF8.self))
            }
            result.append(contentsOf: Array("\"\(Secrets.placeholder)\"".utf8))
            changed = true
            position = end
        }
        return changed ? result : nil
    }
}

extension JSONValue {
    /// The text of every string and number in the value.
    var scalarTexts: [String] {
        switch self {
        case .string(let text): [text]
        case .integer(let number): ["\(number)"]
        case .number(let number): ["\(number)"]
        case .array(let items): items.flatMap(\.scalarTexts)
        case .object(let members): members.values.flatMap(\.scalarTexts)
        case .null, .bool: []
        }
    }
}
