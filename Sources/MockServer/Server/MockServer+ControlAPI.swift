import Foundation
import OrchestrateModel
import Synchronization

/// The control API under `/__orchestrate/` — never forwarded, never recorded:
///
/// - `GET  /__orchestrate/health`
/// - `POST /__orchestrate/steps` `{"name": "I open the app", "keyword": "Given "}` opens a step;
///   `{"status": "passed"}` (or failed with `"error"`) ends the open one. With `startedAt` and
///   `finishedAt` a whole step is reported at once. `GET` lists the session's steps.
/// - `POST /__orchestrate/stubs` one stub or a list (the `mock.stubs` form); `GET` lists the added ones;
///   `DELETE [?name=N]` removes them.
/// - `GET|PUT /__orchestrate/collections/NAME` a collection's items.
/// - `POST /__orchestrate/randoms` `{"key": "email", "value": "a@b.test"}`: in record and live the value is
///   kept (with the cassette); in replay the recorded value comes back instead.
extension MockServer {
    func control(_ request: ReceivedRequest) -> MockResponse {
        let (path, rawQuery) =
            request.uri.firstIndex(of: "?").map {
                (String(request.uri[..<$0]), String(request.uri[request.uri.index(after: $0)...]))
            } ?? (request.uri, "")
        let body = try? JSONDecoder().decode(JSONValue.self, from: Data(request.body))
        switch (request.method, path) {
        case ("GET", "/__orchestrate/health"):
            let session = state.withLock { $0.session }
            return .jsonValue(
                200,
                .object([
                    "status": .string("ok"), "mode": .string(session.mode.rawValue),
                    "scenario": .string(session.scenarioID ?? ""),
                ]))
        case ("POST", "/__orchestrate/steps"):
            guard let body, case .object = body else {
                return Self.badRequest("a step is a JSON object with name, keyword, status…")
            }
            return step(body)
        case ("GET", "/__orchestrate/steps"):
            let steps = state.withLock { $0.steps }
            return .encoded(200, steps)
        case ("POST", "/__orchestrate/stubs"):
            let list: [JSONValue]
            switch body {
            case .array(let items)?: list = items
            case let item? where item.objectMembers != nil: list = [item]
            default: return Self.badRequest("send one stub (a JSON object) or a list of them")
            }
            do {
                let stubs = try list.enumerated().map { index, item throws(StubError) -> Stub in
                    do throws(StubError) {
                        return try Stub(item)
                    } catch {
                        throw StubError(
                            path: "stub \(index + 1)\(error.path.isEmpty ? "" : " \(error.path)")",
                            message: error.message)
                    }
                }
                state.withLock { $0.stubs.add(stubs) }
                return .jsonValue(201, .object(["added": .integer(Int64(stubs.count))]))
            } catch {
                return Self.badRequest("\(error)")
            }
        case ("GET", "/__orchestrate/stubs"):
            let stubs = state.withLock { $0.stubs.runtimeStubs }
            return .jsonValue(
                200,
                .array(
                    stubs.map { stub in
                        .object([
                            "name": stub.name.map(JSONValue.string) ?? .null,
                            "method": stub.method.map(JSONValue.string) ?? .null,
                            "host": stub.host.map(JSONValue.string) ?? .null, "path": .string(stub.path.description),
                        ])
                    }))
        case ("DELETE", "/__orchestrate/stubs"):
            let name = MockRequest.queryItems(rawQuery).first { $0.name == "name" }?.value
            let removed = state.withLock { $0.stubs.remove(named: name) }
            return .jsonValue(200, .object(["removed": .integer(Int64(removed))]))
        case (let method, _) where path.hasPrefix("/__orchestrate/collections/"):
            let name = String(path.dropFirst("/__orchestrate/collections/".count))
            if method == "PUT" {
                guard case .array(let items)? = body else {
                    return Self.badRequest("a collection is a JSON array of objects")
                }
                state.withLock { $0.stubs.setCollection(name, items: items) }
                return .jsonValue(200, .object(["items": .integer(Int64(items.count))]))
            }
            guard method == "GET" else { break }
            guard let items = state.withLock({ $0.stubs.collections[name] }) else {
                return .jsonValue(404, .object(["error": .string("no collection \(name)")]))
            }
            return .jsonValue(200, .array(items))
        case ("POST", "/__orchestrate/randoms"):
            guard let key = body?["key"]?.stringValue, let value = body?["value"]?.scalarText else {
                return Self.badRequest("send {\"key\": \"name\", \"value\": \"a fresh value\"}")
            }
            return random(key: key, proposed: value)
        default:
            break
        }
        return .text(404, "orchestrate: no control endpoint \(request.method) \(path)")
    }

    private func step(_ body: JSONValue) -> MockResponse {
        func date(_ key: String) -> Date? {
            body[key]?.stringValue.flatMap {
                try? Date($0, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
            }
                ?? body[key]?.stringValue.flatMap { try? Date($0, strategy: .iso8601) }
        }
        let report = StepReport(
            keyword: body["keyword"]?.stringValue, name: body["name"]?.stringValue,
            status: body["status"]?.stringValue.map(StepStatus.init(rawValue:)),
            startedAt: date("startedAt"), finishedAt: date("finishedAt"), error: body["error"]?.stringValue
        )
        let now = Date()
        let (ended, position, attemptID) = state.withLock { state in
            // A step's name and error are stored: the session's secrets go out of them.
            var report = report
            report.name = report.name.map { state.secrets.scrubbed($0) }
            report.error = report.error.map { state.secrets.scrubbed($0) }
            let (ended, position) = state.report(report, at: now)
            return (ended, position, state.session.attemptID)
        }
        if let ended { emit(.step(ended, attemptID: attemptID)) }
        return .jsonValue(201, .object(["position": .integer(Int64(position))]))
    }

    private func random(key: String, proposed: String) -> MockResponse {
        let (value, recorded) = state.withLock { $0.random(key, proposed: proposed) }
        return .jsonValue(200, .object(["key": .string(key), "value": .string(value), "replayed": .bool(recorded)]))
    }

    static func badRequest(_ message: String) -> MockResponse {
        .jsonValue(400, .object(["error": .string(message)]))
    }
}
