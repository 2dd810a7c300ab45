import Foundation
import Mustache
import OrchestrateModel

/// A canned answer for the requests it matches: in mock and hybrid mode from the configuration
/// (`mock.stubs`), in every mode when added at run time through the control API.
///
/// ```yaml
/// - request: { method: GET, host: api.clinic.test, path: /v1/slots/{day}, query: { lang: en } }
///   response: { status: 200, json: { day: "{{request.params.day}}" }, template: true, delay: 200ms }
/// - request: { method: POST, path: /v1/pay }
///   responses: [ { status: 500 }, { status: 200, body: paid } ]      # the nth call gets the nth answer
/// - request: { path: /v1/flaky }
///   response: { fault: reset }                                        # reset, close-before-body, dribble, malformed
/// - request: { host: api.clinic.test, path: /v1/appointments }
///   collection: { name: appointments, id: id, items: [ { id: 1, day: monday } ] }
/// ```
package struct Stub: Sendable {
    package var name: String?
    package var method: String?
    package var host: String?
    package var path: PathPattern
    package var query: [String: String]
    package var headers: [String: String]
    /// One answer, or a sequence (the last repeats).
    package var responses: [StubResponse]
    /// A stateful collection instead of canned answers: CRUD over JSON objects by id at `path` and `path/{id}`.
    package var collection: CollectionStub?

    package struct CollectionStub: Sendable {
        package var name: String
        package var idField: String
        package var items: [JSONValue]
    }

    /// What a match captured: the path parameters, and for a collection the id of the item addressed
    /// (`nil` at the collection's own path).
    struct Match {
        var parameters: [String: String]
        var itemID: String?
    }

    /// Whether the stub answers the request, and what it captured.
    func matches(_ request: MockRequest) -> Match? {
        if let method, method != request.method { return nil }
        if let host, host != request.host { return nil }
        if !query.isEmpty {
            let sent = Dictionary(
                MockRequest.queryItems(request.rawQuery).map { ($0.name, $0.value) },
                uniquingKeysWith: { first, _ in first })
            for (name, value) in query where sent[name] != value { return nil }
        }
        for (name, value) in headers where request.header(name) != value { return nil }
        if let parameters = path.match(request.path) { return Match(parameters: parameters) }
        guard collection != nil, let (parameters, id) = path.matchWithItem(request.path) else { return nil }
        return Match(parameters: parameters, itemID: id)
    }
}

/// One canned answer.
package struct StubResponse: Sendable {
    package var status = 200
    package var headers: [(name: String, value: String)] = []
    package var body: [UInt8] = []
    /// Rendered over the request when set (Mustache), instead of `body`.
    package var template: MustacheTemplate?
    package var delay: Duration?
    package var fault: Fault?

    package init() {}
}

/// How a stub breaks the connection, as a flaky network would.
package enum Fault: String, Sendable, CaseIterable {
    /// The connection is reset (RST) without an answer.
    case reset
    /// The status line and headers arrive, then the connection closes before the body.
    case closeBeforeBody = "close-before-body"
    /// The whole answer, in ten pieces 100 ms apart.
    case dribble
    /// Bytes that are not HTTP, then the connection closes.
    case malformed

    /// Whether the connection ends with the fault (nothing more is answered on it).
    var closesConnection: Bool { self != .dribble }
}

/// A path with `{name}` parameters (one segment each), `*` (any one segment) and a trailing `**` (the rest).
package struct PathPattern: Sendable, CustomStringConvertible {
    enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
        case any
        case rest
    }

    let segments: [Segment]
    package let description: String

    package init(_ text: String) {
        description = text
        segments = text.split(separator: "/").map { part in
            if part == "*" { return .any }
            if part == "**" { return .rest }
            if part.hasPrefix("{") && part.hasSuffix("}") && part.count > 2 {
                return .parameter(String(part.dropFirst().dropLast()))
            }
            return .literal(part.percentDecoded)
        }
    }

    /// The captured parameters when `path` matches.
    func match(_ path: String) -> [String: String]? {
        match(segments: path.split(separator: "/").map(\.percentDecoded))
    }

    /// The captured parameters and the last segment, when `path` is the pattern and one segment more.
    func matchWithItem(_ path: String) -> (parameters: [String: String], item: String)? {
        var parts = path.split(separator: "/").map(\.percentDecoded)
        guard let item = parts.popLast(), let captured = match(segments: parts) else { return nil }
        return (captured, item)
    }

    private func match(segments parts: [String]) -> [String: String]? {
        var captured: [String: String] = [:]
        var index = 0
        for segment in segments {
            switch segment {
            case .rest:
                return captured
            case .literal(let text):
                guard index < parts.count, parts[index] == text else { return nil }
            case .parameter(let name):
                guard index < parts.count else { return nil }
                captured[name] = parts[index]
            case .any:
                guard index < parts.count else { return nil }
            }
            index += 1
        }
        return index == parts.count ? captured : nil
    }
}

/// A stub definition that cannot be used; `path` names the key (`response.status`).
package struct StubError: Error, CustomStringConvertible {
    package var path: String
    package var message: String

    package var description: String { path.isEmpty ? message : "\(path): \(message)" }
}

extension Stub {
    /// Reads a stub from its JSON (control API) or YAML (configuration) form. Files named by
    /// `response.file` are read relative to `directory`.
    package init(_ value: JSONValue, directory: String = FileManager.default.currentDirectoryPath) throws(StubError) {
        let members = try Self.object(
            value, path: "", keys: ["name", "request", "response", "responses", "collection"])
        name = try members["name"].map { v throws(StubError) in try Self.string(v, path: "name") }
        let request = try Self.object(
            members["request"] ?? .object([:]), path: "request", keys: ["method", "host", "path", "query", "headers"])
        method = try request["method"].map { v throws(StubError) in
            try Self.string(v, path: "request.method").uppercased()
        }
        host = try request["host"].map { v throws(StubError) in try Self.string(v, path: "request.host").lowercased() }
        let pathText =
            try request["path"].map { v throws(StubError) in try Self.string(v, path: "request.path") } ?? "/**"
        guard pathText.hasPrefix("/") else {
            throw StubError(path: "request.path", message: "must start with / (got \"\(pathText)\")")
        }
        path = PathPattern(pathText)
        query = try Self.stringMap(request["query"], path: "request.query")
        headers = try Self.stringMap(request["headers"], path: "request.headers")
        responses = []
        collection = nil
        switch (members["response"], members["responses"], members["collection"]) {
        case (let single?, nil, nil):
            responses = [try Self.response(single, path: "response", directory: directory)]
        case (nil, .array(let list)?, nil) where !list.isEmpty:
            responses = try list.enumerated().map { index, item throws(StubError) in
                try Self.response(item, path: "responses[\(index)]", directory: directory)
            }
        case (nil, nil, let spec?):
            let fields = try Self.object(spec, path: "collection", keys: ["name", "id", "items"])
            guard let name = fields["name"]?.stringValue, !name.isEmpty else {
                throw StubError(path: "collection.name", message: "a collection needs a name")
            }
            let idField =
                try fields["id"].map { v throws(StubError) in try Self.string(v, path: "collection.id") } ?? "id"
            var items: [JSONValue] = []
            if let list = fields["items"] {
                guard case .array(let values) = list else {
                    throw StubError(path: "collection.items", message: "must be a list of objects")
                }
                items = values
            }
            collection = CollectionStub(name: name, idField: idField, items: items)
        default:
            throw StubError(
                path: "", message: "a stub needs exactly one of response, responses (a non-empty list) or collection")
        }
    }

    private static func response(_ value: JSONValue, path: String, directory: String) throws(StubError) -> StubResponse
    {
        let members = try object(
            value, path: path, keys: ["status", "headers", "body", "json", "file", "template", "delay", "fault"])
        var response = StubResponse()
        if let status = members["status"] {
            guard case .integer(let code) = status, (100...599).contains(code) else {
                throw StubError(path: "\(path).status", message: "must be an HTTP status code (100-599)")
            }
            response.status = Int(code)
        }
        response.headers = try stringMap(members["headers"], path: "\(path).headers").sorted { $0.key < $1.key }.map {
            (name: $0.key, value: $0.value)
        }
        let bodies = ["body", "json", "file"].filter { members[$0] != nil }
        guard bodies.count <= 1 else {
            throw StubError(
                path: path, message: "give one of body, json or file (got \(bodies.joined(separator: ", ")))")
        }
        var isJSON = false
        if let body = members["body"] {
            response.body = Array(try string(body, path: "\(path).body").utf8)
        } else if let json = members["json"] {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            response.body = Array((try? encoder.encode(json)) ?? Data())
            isJSON = true
            if response.headers.value(named: "content-type") == nil {
                response.headers.append((name: "content-type", value: "application/json"))
            }
        } else if let file = members["file"] {
            let name = try string(file, path: "\(path).file")
            let full = name.hasPrefix("/") ? name : "\(directory)/\(name)"
            guard let data = FileManager.default.contents(atPath: full) else {
                throw StubError(path: "\(path).file", message: "cannot read \(full)")
            }
            response.body = Array(data)
        }
        if case .bool(true)? = members["template"] {
            let contentType =
                isJSON
                    || response.headers.contains { $0.name.lowercased() == "content-type" && $0.value.contains("json") }
                ? "JSON" : "TEXT"
            TemplateContext.registerContentTypes()
            do {
                response.template = try MustacheTemplate(
                    string: "{{% CONTENT_TYPE: \(contentType)}}" + String(decoding: response.body, as: UTF8.self))
            } catch {
                throw StubError(
                    path: "\(path).template", message: "the body is not a valid Mustache template: \(error)")
            }
        } else if let template = members["template"], template != .bool(false) {
            throw StubError(path: "\(path).template", message: "must be true or false")
        }
        if let delay = members["delay"] {
            response.delay = try duration(delay, path: "\(path).delay")
        }
        if let fault = members["fault"] {
            let text = try string(fault, path: "\(path).fault")
            guard let kind = Fault(rawValue: text) else {
                throw StubError(
                    path: "\(path).fault",
                    message:
                        "must be one of \(Fault.allCases.map(\.rawValue).joined(separator: ", ")) (got \"\(text)\")")
            }
            response.fault = kind
        }
        return response
    }

    /// `250ms`, `2s` or a number of milliseconds.
    static func duration(_ value: JSONValue, path: String) throws(StubError) -> Duration {
        switch value {
        case .integer(let milliseconds) where milliseconds >= 0:
            return .milliseconds(milliseconds)
        case .string(let text):
            if text.hasSuffix("ms"), let number = Double(text.dropLast(2)), number >= 0 {
                return .microseconds(Int64(number * 1000))
            }
            if text.hasSuffix("s"), let number = Double(text.dropLast()), number >= 0 {
                return .microseconds(Int64(number * 1_000_000))
            }
        default:
            break
        }
        throw StubError(path: path, message: "must be a duration such as 250ms or 2s")
    }

    private static func object(
        _ value: JSONValue, path: String, keys: Set<String>
    ) throws(StubError) -> [String: JSONValue] {
        guard case .object(let members) = value else { throw StubError(path: path, message: "must be a mapping") }
        if let unknown = members.keys.sorted().first(where: { !keys.contains($0) }) {
            throw StubError(
                path: path.isEmpty ? unknown : "\(path).\(unknown)",
                message: "unknown key (expected one of \(keys.sorted().joined(separator: ", ")))"
            )
        }
        return members
    }

    private static func string(_ value: JSONValue, path: String) throws(StubError) -> String {
        guard let text = value.scalarText, value != .null else {
            throw StubError(path: path, message: "must be a string")
        }
        return text
    }

    private static func stringMap(_ value: JSONValue?, path: String) throws(StubError) -> [String: String] {
        guard let value else { return [:] }
        guard case .object(let members) = value else {
            throw StubError(path: path, message: "must be a mapping of names to values")
        }
        var result: [String: String] = [:]
        for (key, member) in members { result[key] = try string(member, path: "\(path).\(key)") }
        return result
    }
}
