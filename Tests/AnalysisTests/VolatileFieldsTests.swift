import Analysis
import Foundation
import OrchestrateModel
import Testing

@Suite("Volatile fields")
struct VolatileFieldUnitTests {
    static func exchange(_ path: String, request: String = "", response: String) -> Exchange {
        Exchange(
            sequence: 1, mode: .live, matched: true, host: "api.x.test", method: "POST",
            url: "https://api.x.test\(path)", requestHeaders: [], requestBody: Array(request.utf8), status: 200,
            responseHeaders: [], responseBody: Array(response.utf8), startedAt: Date(), durationMicroseconds: 1000)
    }

    @Test("a field that differs from the recording with different values is proposed, array positions as [*]")
    func suggestions() {
        let recorded = [
            Self.exchange(
                "/v1/cart", request: #"{"nonce":"a"}"#, response: #"{"id":1,"items":[{"at":"t0"}],"ok":true}"#)
        ]
        func live(_ n: Int, ok: Bool = true) -> VolatileFields.Sample {
            VolatileFields.Sample(
                scenarioID: "cart",
                recorded: recorded,
                live: [
                    Self.exchange(
                        "/v1/cart", request: #"{"nonce":"n\#(n)"}"#,
                        response: #"{"id":\#(n + 1),"items":[{"at":"t\#(n)"}],"ok":\#(ok)}"#)
                ])
        }
        let found = VolatileFields().suggestions([live(1, ok: false), live(2, ok: false), live(3, ok: false)])
        #expect(found.map(\.path) == ["$.id", "$.items[*].at", "$.nonce"], "\(found)")
        #expect(found.first { $0.path == "$.nonce" }?.bodies == ["request"])
        #expect(found.allSatisfy { $0.changed == 3 && $0.attempts == 3 && $0.tests == ["cart"] })
        // `ok` changed the same way every time: the backend's change, not noise.
        #expect(!found.contains { $0.path == "$.ok" })
        // Nor are two array items that changed once each, the same way in every attempt (their values differ from
        // each other, not from one attempt to the next).
        let list = [Self.exchange("/v1/list", response: #"{"items":[{"p":1},{"p":2}]}"#)]
        let moved = (0..<3).map { _ in
            VolatileFields.Sample(
                scenarioID: "list", recorded: list,
                live: [Self.exchange("/v1/list", response: #"{"items":[{"p":3},{"p":4}]}"#)])
        }
        #expect(VolatileFields().suggestions(moved).isEmpty)
        #expect(VolatileFields(minimumChanges: 4).suggestions([live(1), live(2), live(3)]).isEmpty)
        #expect(
            VolatileFields().suggestions([live(1), live(2)]) { $0.hasPrefix("$.items") }.map(\.path) == [
                "$.id", "$.nonce",
            ])
        let yaml = VolatileFields.yaml(found, already: ["$.token"])
        #expect(
            yaml.hasPrefix(
                "mock:\n  ignore:\n    json:\n      - \"$.token\"\n      - \"$.id\"  # response body; changed in 3 of 3"
            ))
    }

    @Test("array positions are made [*], and YAML quoting keeps a path whole")
    func general() {
        #expect(VolatileFields.general("$.a[12].b[0]['x[1]'][3]") == "$.a[*].b[*]['x[1]'][*]")
        #expect(VolatileFields.general("$.a['1x']") == "$.a['1x']")
        #expect(VolatileFields.yaml([], already: ["$['a\"b\\\n']"]).hasSuffix(#"- "$['a\"b\\\u000a']""#))
    }
}
