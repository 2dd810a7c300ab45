import Foundation
import Mustache
import OrchestrateModel

/// The stubs of one session: the configured ones, those added at run time (newest first, and
/// consulted first), how often each answered (sequences), and the state of the collections.
package struct StubBook: Sendable {
    private var configured: [Stub]
    private var added: [(serial: Int, stub: Stub)] = []
    private var serial = 0
    private var calls: [Int: Int] = [:]
    private(set) var collections: [String: [JSONValue]] = [:]

    init(configured: [Stub]) {
        self.configured = configured
        for case let collection? in configured.map(\.collection) where collections[collection.name] == nil {
            collections[collection.name] = collection.items
        }
    }

    var runtimeStubs: [Stub] { added.map(\.stub) }

    /// Adds stubs at run time; one with the name of an earlier one replaces it.
    package mutating func add(_ stubs: [Stub]) {
        for stub in stubs {
            if let name = stub.name { added.removeAll { $0.stub.name == name } }
            serial += 1
            added.insert((serial, stub), at: 0)
            if let collection = stub.collection, collections[collection.name] == nil {
                collections[collection.name] = collection.items
            }
        }
    }

    /// Removes the run-time stubs (all, or the one named); the configured ones stay.
    mutating func remove(named name: String?) -> Int {
        let before = added.count
        if let name { added.removeAll { $0.stub.name == name } } else { added.removeAll() }
        return before - added.count
    }

    mutating func setCollection(_ name: String, items: [JSONValue]) {
        collections[name] = items
    }

    /// The answer of the first stub that matches, `nil` when none does. `runtimeOnly`: only stubs added
    /// through the control API answer (record, replay and live modes).
    mutating func answer(_ request: MockRequest, session: MockSession, runtimeOnly: Bool) -> MockResponse? {
        for (serial, stub) in added {
            if let response = answer(request, with: stub, key: serial, session: session) { return response }
        }
        guard !runtimeOnly else { return nil }
        for (offset, stub) in configured.enumerated() {
            if let response = answer(request, with: stub, key: -1 - offset, session: session) { return response }
        }
        return nil
    }

    /// The stub's answer when it matches; `key` counts its calls (serials for added stubs, negative
    /// positions for configured ones).
    private mutating func answer(
        _ request: MockRequest, with stub: Stub, key: Int, session: MockSession
    ) -> MockResponse? {
        guard let match = stub.matches(request) else { return nil }
        let call = calls[key, default: 0] + 1
        calls[key] = call
        if let collection = stub.collection {
            return answerCollection(collection, id: match.itemID, request: request)
        }
        let response = stub.responses[min(call, stub.responses.count) - 1]
        var body = response.body
        if let template = response.template {
            body = Array(
                template.render(TemplateContext.values(request, params: match.parameters, session: session, call: call))
                    .utf8)
        }
        return MockResponse(
            status: response.status, headers: response.headers, body: body, delay: response.delay, fault: response.fault
        )
    }

    // MARK: Collections

    private mutating func answerCollection(
        _ collection: Stub.CollectionStub, id: String?, request: MockRequest
    ) -> MockResponse {
        var items = collections[collection.name] ?? []
        defer { collections[collection.name] = items }
        let field = collection.idField
        func index(of id: String) -> Int? { items.firstIndex { $0[field]?.scalarText == id } }
        func notFound(_ id: String) -> MockResponse {
            .jsonValue(404, .object(["error": .string("no item with \(field) \(id) in collection \(collection.name)")]))
        }
        func body() -> [String: JSONValue]? {
            guard case .object(let members)? = try? JSONDecoder().decode(JSONValue.self, from: Data(request.body))
            else { return nil }
            return members
        }
        let badBody = MockResponse.jsonValue(400, .object(["error": .string("the body must be a JSON object")]))
        switch (request.method, id) {
        case ("GET", nil):
            return .jsonValue(200, .array(items))
        case ("GET", let id?):
            return index(of: id).map { .jsonValue(200, items[$0]) } ?? notFound(id)
        case ("POST", nil):
            guard var item = body() else { return badBody }
            if item[field] == nil { item[field] = nextID(items, field: field) }
            items.append(.object(item))
            return .jsonValue(201, .object(item))
        case ("PUT", let id?), ("PATCH", let id?):
            guard let position = index(of: id) else { return notFound(id) }
            guard let changes = body() else { return badBody }
            var item: [String: JSONValue] = request.method == "PUT" ? [:] : (items[position].objectMembers ?? [:])
            item.merge(changes) { _, new in new }
            item[field] = items[position][field]
            items[position] = .object(item)
            return .jsonValue(200, .object(item))
        case ("DELETE", let id?):
            guard let position = index(of: id) else { return notFound(id) }
            items.remove(at: position)
            return MockResponse(status: 204, headers: [], body: [])
        default:
            return .jsonValue(
                405,
                .object([
                    "error": .string(
                        "collection \(collection.name) answers GET and POST at its path, GET, PUT, PATCH and DELETE at path/{\(field)}"
                    )
                ]))
        }
    }

    /// The next numeric id when the ids are numbers, a UUID otherwise.
    private func nextID(_ items: [JSONValue], field: String) -> JSONValue {
        var highest: Int64 = 0
        for item in items {
            switch item[field] {
            case .integer(let value)?: highest = max(highest, value)
            case nil: continue
            default: return .string(UUID().uuidString.lowercased())
            }
        }
        return .integer(highest + 1)
    }
}

extension JSONValue {
    var objectMembers: [String: JSONValue]? {
        if case .object(let members) = self { return members }
        return nil
    }
}
