import Foundation
import OrchestrateModel

/// Finds the recorded exchange that answers a request in replay.
///
/// Requests compare on the configured attributes: the method, the path, the query as a multiset (order
/// does not matter, ignored parameters left out), the body — JSON bodies canonically (key order and
/// spacing do not matter). Identical requests are answered by their recordings in recorded order;
/// past the last one, the last repeats (or the request fails, when configured so).
package struct RequestMatcher: Sendable {
    /// One recorded request, reduced to what matching compares.
    struct Key: Hashable, Sendable {
        var method: String
        var host: String
        var path: String
        var query: [String]
        var headers: [String]
        var body: [UInt8]
    }

    package struct NearMiss: Sendable, Error, CustomStringConvertible {
        package var request: String
        /// The closest recorded request and what differs; `nil` when the cassette has nothing for the host.
        package var closest: String?
        package var differences: [String]
        package var exhausted: Bool

        package var description: String {
            if exhausted {
                return "every recording of \(request) was already used (mock.repeat is off)"
            }
            guard let closest else {
                return "no recorded exchange for \(request): the cassette has no request to this host"
            }
            return
                "no recorded exchange matches \(request); closest: \(closest), which differs in \(differences.joined(separator: "; "))"
        }
    }

    private let configuration: MockConfiguration
    private let keys: [Key]
    private let summaries: [String]
    private let candidates: [Key: [Int]]

    package init(entries: [HAR.Entry], configuration: MockConfiguration) {
        self.configuration = configuration
        var keys: [Key] = []
        var summaries: [String] = []
        for entry in entries {
            let url = URLComponents(string: entry.request.url)
            let host = (entry.orchestrate?.host ?? url?.host ?? "").lowercased()
            let path = url?.percentEncodedPath ?? "/"
            let rawQuery = url?.percentEncodedQuery ?? ""
            let headers = entry.request.headers.map { (name: $0.name, value: $0.value) }
            keys.append(
                Self.key(
                    method: entry.request.method.uppercased(), host: host, path: path.isEmpty ? "/" : path,
                    rawQuery: rawQuery, headers: headers, body: entry.requestBody, configuration: configuration))
            summaries.append("\(entry.request.method) \(entry.request.url)")
        }
        var candidates: [Key: [Int]] = [:]
        for (index, key) in keys.enumerated() { candidates[key, default: []].append(index) }
        self.keys = keys
        self.summaries = summaries
        self.candidates = candidates
    }

    /// The index of the entry answering `request`, given how often each identical request was already
    /// answered (`used`, updated).
    package func match(_ request: MockRequest, used: inout [Int: Int]) -> Result<Int, NearMiss> {
        let key = Self.key(
            method: request.method, host: request.host, path: request.path, rawQuery: request.rawQuery,
            headers: request.headers, body: request.body, configuration: configuration)
        if let indices = candidates[key] {
            let count = used[indices[0], default: 0]
            used[indices[0]] = count + 1
            if count < indices.count { return .success(indices[count]) }
            if configuration.repeatLast { return .success(indices[indices.count - 1]) }
            return .failure(
                NearMiss(request: request.summary, closest: summaries[indices[0]], differences: [], exhausted: true))
        }
        return .failure(nearMiss(key, request: request))
    }

    private func nearMiss(_ key: Key, request: MockRequest) -> NearMiss {
        var best: (index: Int, differences: [String])?
        for (index, recorded) in keys.enumerated() where recorded.host == key.host {
            let differences = Self.differences(key, recorded, headers: configuration.matchHeaders)
            if best == nil || differences.count < best!.differences.count { best = (index, differences) }
        }
        guard let best else {
            return NearMiss(request: request.summary, closest: nil, differences: [], exhausted: false)
        }
        return NearMiss(
            request: request.summary, closest: summaries[best.index], differences: best.differences, exhausted: false)
    }

    private static func differences(_ request: Key, _ recorded: Key, headers: [String]) -> [String] {
        var differences: [String] = []
        if request.method != recorded.method { differences.append("method: \(request.method) vs \(recorded.method)") }
        if request.path != recorded.path { differences.append("path: \(request.path) vs \(recorded.path)") }
        if request.query != recorded.query {
            let sent = Set(request.query), kept = Set(recorded.query)
            let extra = request.query.filter { !kept.contains($0) },
                missing = recorded.query.filter { !sent.contains($0) }
            var parts: [String] = []
            if !extra.isEmpty { parts.append("sent \(extra.joined(separator: "&"))") }
            if !missing.isEmpty { parts.append("recorded \(missing.joined(separator: "&"))") }
            differences.append("query: \(parts.joined(separator: ", "))")
        }
        for (index, name) in headers.enumerated() where request.headers[index] != recorded.headers[index] {
            differences.append("header \(name): \(request.headers[index]) vs \(recorded.headers[index])")
        }
        if request.body != recorded.body {
            differences.append("body: \(excerpt(request.body)) vs \(excerpt(recorded.body))")
        }
        return differences
    }

    private static func excerpt(_ body: [UInt8]) -> String {
        guard !body.isEmpty else { return "(empty)" }
        let text = String(decoding: body.prefix(120), as: UTF8.self)
        return body.count > 120 ? "\(text)…" : text
    }

    /// The key of a request whose method is upper case and host lower case (a ``MockRequest`` is).
    static func key(
        method: String, host: String, path: String, rawQuery: String, headers: [(name: String, value: String)],
        body: [UInt8],
        configuration: MockConfiguration
    ) -> Key {
        let match = configuration.match
        let query =
            match.contains(.query)
            ? MockRequest.queryItems(rawQuery).filter { !configuration.ignoredQuery.contains($0.name) }.map {
                "\($0.name)=\($0.value)"
            }.sorted()
            : []
        return Key(
            method: match.contains(.method) ? method : "",
            host: host,
            path: match.contains(.path) ? path.percentDecoded : "",
            query: query,
            headers: configuration.matchHeaders.map { name in
                headers.value(named: name) ?? "(none)"
            },
            body: match.contains(.body) ? canonicalBody(body, ignoring: configuration.ignoredJSON) : []
        )
    }

    /// JSON bodies in one canonical form (sorted keys, no spacing, ignored fields left out); anything else as is.
    static func canonicalBody(_ body: [UInt8], ignoring ignored: [JSONPath] = []) -> [UInt8] {
        guard let first = body.first(where: { ![0x20, 0x09, 0x0a, 0x0d].contains($0) }),
            first == UInt8(ascii: "{") || first == UInt8(ascii: "[")
        else {
            return body
        }
        guard var document = try? JSONDecoder().decode(JSONValue.self, from: Data(body)) else { return body }
        for path in ignored { path.apply(to: &document) { _ in nil } }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(document)).map(Array.init) ?? body
    }
}
