import Analysis
import Foundation
import OrchestrateModel
import Testing

@Suite struct NetworkDiffTests {
    func exchange(
        _ sequence: Int, _ method: String, _ url: String, status: Int? = 200, body: String = "",
        headers: [String: String] = [:],
        milliseconds: Int64 = 5, step: Int? = nil
    ) -> Exchange {
        Exchange(
            sequence: sequence, mode: .live, matched: false, host: URL(string: url)?.host ?? "", method: method,
            url: url, requestHeaders: [],
            requestBody: [], status: status,
            responseHeaders: headers.map { Exchange.Header(name: $0.key, value: $0.value) },
            responseBody: Array(body.utf8), startedAt: Date(), durationMicroseconds: milliseconds * 1000,
            stepPosition: step
        )
    }

    func json(_ text: String) throws -> JSONValue { try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) }

    @Test("JSON bodies differ field by field, by JSON path")
    func jsonChanges() throws {
        let before = try json(
            #"{"reply":"Shall I book you in?","options":[{"label":"OK"},{"label":"Not now"}],"n":1,"gone":true,"odd key":[1]}"#
        )
        let after = try json(
            #"{"reply":"Shall I book you in?","options":[{"label":"SURE"},{"label":"Not now"},{"label":"Later"}],"n":1.0,"new":null,"odd key":[1,2]}"#
        )
        let changes = JSONDiff.changes(before, after).map {
            "\($0.path): \(JSONDiff.render($0.before)) → \(JSONDiff.render($0.after))"
        }
        #expect(
            changes == [
                "$.gone: true → absent",
                "$.new: absent → null",
                "$['odd key'][1]: absent → 2",
                "$.options[0].label: \"OK\" → \"SURE\"",
                "$.options[2]: absent → {\"label\":\"Later\"}",
            ])
        #expect(JSONDiff.changes(before, before).isEmpty)
    }

    @Test("new and missing requests, status, header, body and latency changes, each at its step")
    func differences() throws {
        let chat = #"{"options":[{"label":"OK"}],"id":"a1"}"#
        let recorded = [
            exchange(1, "GET", "https://api.clinic.test/v1/news?b=2&a=1", status: 500, step: 1),
            exchange(2, "GET", "https://api.clinic.test/v1/news?a=1&b=2", step: 1),
            exchange(
                3, "POST", "https://api.clinic.test/v1/chat/messages", body: chat,
                headers: ["Content-Type": "application/json", "Date": "Mon"],
                milliseconds: 40, step: 2),
        ]
        let live = [
            exchange(1, "GET", "https://api.clinic.test/v1/news?a=1&b=2", step: 1),
            exchange(
                2, "POST", "https://api.clinic.test/v1/chat/messages",
                body: #"{"options":[{"label":"SURE"}],"id":"b2"}"#,
                headers: ["content-type": "text/json", "date": "Tue"], milliseconds: 900, step: 2),
            exchange(3, "GET", "https://api.clinic.test/v1/slots", status: 503, step: 3),
        ]
        let found = NetworkDiff().differences(recorded: recorded, live: live)
        #expect(
            found.map(\.description) == [
                "GET api.clinic.test/v1/news?a=1&b=2: status 500 → 200",
                "POST api.clinic.test/v1/chat/messages header content-type: application/json → text/json",
                "POST api.clinic.test/v1/chat/messages $.id: \"a1\" → \"b2\"",
                "POST api.clinic.test/v1/chat/messages $.options[0].label: \"OK\" → \"SURE\"",
                "POST api.clinic.test/v1/chat/messages: 40 ms → 900 ms (slower)",
                "GET api.clinic.test/v1/slots: new request (live answered 503)",
                "GET api.clinic.test/v1/news?a=1&b=2: recorded, not made live",
            ])
        #expect(found.map(\.step) == [1, 2, 2, 2, 2, 3, 1])

        // $.id changed between two passing runs too: noise, not evidence.
        let passing = NetworkDiff().differences(
            recorded: [recorded[2]],
            live: [
                exchange(
                    1, "POST", "https://api.clinic.test/v1/chat/messages",
                    body: #"{"options":[{"label":"OK"}],"id":"c3"}"#,
                    headers: ["Content-Type": "application/json"], milliseconds: 40, step: 2)
            ])
        #expect(passing.map(\.key) == ["body POST api.clinic.test/v1/chat/messages $.id"])
        let evidence = NetworkDiff().differences(
            recorded: recorded, live: live, noise: NetworkDifference.noise([passing]))
        #expect(evidence.count == found.count - 1)
        #expect(!evidence.contains { $0.path == "$.id" })
        #expect(NetworkDiff().differences(recorded: recorded, live: recorded).isEmpty)
    }
}

@Suite struct VerdictTests {
    typealias Outcomes = VerdictRule.Outcomes

    static let cases: [(Outcomes?, Outcomes?, Verdict)] = [
        (Outcomes(thisRun: [true]), Outcomes(thisRun: [true]), .stable),
        (Outcomes(thisRun: [false]), Outcomes(thisRun: [false]), .failing),
        (Outcomes(thisRun: [true]), Outcomes(thisRun: [false]), .drift),
        (Outcomes(thisRun: [false]), Outcomes(thisRun: [true]), .staleRecording),
        (Outcomes(thisRun: [false, true]), Outcomes(thisRun: [true]), .nondeterministic),
        (Outcomes(thisRun: [true], history: [true, false, true]), Outcomes(thisRun: [true]), .nondeterministic),
        (Outcomes(thisRun: [true], history: [true, true]), Outcomes(thisRun: [false], history: [false]), .drift),
        // Passed until the backend changed, fails since: one change, not nondeterminism.
        (Outcomes(thisRun: [true], history: [true]), Outcomes(thisRun: [false], history: [true, true]), .drift),
        (
            Outcomes(thisRun: [true], history: [true]), Outcomes(thisRun: [false], history: [true, false, true]),
            .nondeterministic
        ),
        (Outcomes(thisRun: [true]), nil, .stable),
        (nil, Outcomes(thisRun: [false]), .failing),
    ]

    @Test("replay vs live outcomes, retries and same-revision history give the verdict", arguments: cases)
    func verdicts(_ replay: Outcomes?, _ live: Outcomes?, _ expected: Verdict) {
        #expect(VerdictRule.judge(replay: replay, live: live).verdict == expected)
    }
}
