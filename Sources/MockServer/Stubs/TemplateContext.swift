import Foundation
import Mustache
import OrchestrateModel

/// What a stub's template sees: `{{request.method}}`, `{{request.path}}`, `{{request.params.NAME}}`,
/// `{{request.query.NAME}}`, `{{request.headers.NAME}}` (lower-case names), `{{request.body.FIELD}}` (JSON
/// bodies), `{{request.text}}` (the body as text), `{{seed}}`, `{{now}}` (the frozen clock) and `{{call}}`
/// (how often the stub answered, this one included).
enum TemplateContext {
    static func values(
        _ request: MockRequest, params: [String: String], session: MockSession, call: Int
    ) -> [String: Any] {
        let query = Dictionary(
            MockRequest.queryItems(request.rawQuery).map { ($0.name, $0.value) },
            uniquingKeysWith: { first, _ in first })
        let headers = Dictionary(
            request.headers.map { ($0.name.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
        let body = (try? JSONDecoder().decode(JSONValue.self, from: Data(request.body)))?.plain ?? [String: Any]()
        let values: [String: Any] = [
            "method": request.method, "host": request.host, "path": request.path, "params": params, "query": query,
            "headers": headers, "body": body, "text": String(decoding: request.body, as: UTF8.self),
        ]
        return [
            "request": values, "seed": session.seed.map(String.init) ?? "", "now": session.now ?? "", "call": call,
        ]
    }

    /// `JSON`: values are escaped to sit inside a JSON string (`{{x}}`); `{{{x}}}` stays raw.
    static func registerContentTypes() {
        _ = registered
    }

    private static let registered: Bool = {
        MustacheContentTypes.register(JSONStringContent(), named: "JSON")
        return true
    }()

    private struct JSONStringContent: MustacheContentType {
        func escapeText(_ text: String) -> String { JSONValue.escaped(text) }
    }
}
