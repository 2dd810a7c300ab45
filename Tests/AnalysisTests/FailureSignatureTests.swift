import Foundation
import OrchestrateModel
import Testing

@Suite("Failure signatures")
struct FailureSignatureTests {
    @Test("what changes between occurrences is made alike: numbers, UUIDs, addresses, times, temporary paths, digests")
    func normalised() {
        let cases: [(String, String)] = [
            ("expected 3 items, got 2", "expected <n> items, got <n>"),
            ("order 6f1c2a3e-0b4d-4e5f-8a9b-0c1d2e3f4a5b not found", "order <uuid> not found"),
            ("connect to 127.0.0.1:54321 refused", "connect to <addr> refused"),
            ("at 2026-11-27T07:09:41.391Z took 12.5 s", "at <time> took <n> s"),
            ("started 07:09:41 ended 07:10", "started <time> ended <time>"),
            ("cannot open /tmp/orch-t-4b3826df/out.json: denied", "cannot open <tmp>: denied"),
            ("digest 9f86d081884c7d65 differs from 0x1F", "digest <hex> differs from <hex>"),
            // A number inside a name, and a word that is hex by chance, stay.
            ("test_2 and v2beta and 3rd and deadbeef", "test_2 and v2beta and 3rd and deadbeef"),
            ("localhost:8080", "localhost:<n>"),
        ]
        for (text, expected) in cases {
            #expect(FailureSignature.normalised(text) == expected, "\(text)")
        }
    }

    @Test("a signature is the place, the first line of the message without the place it leads with, and the exchange")
    func make() {
        func said(_ text: String) -> FailureSignature.Said { FailureSignature.Said(text, byTest: true) }
        let signature = FailureSignature.make(
            place: ("tests/test_cart.py", 14), said: said("tests/test_cart.py:14: AssertionError: got 2\nmore detail"),
            exchange: "POST api.x.test/v1/carts/{id} → 500")
        #expect(signature == "tests/test_cart.py:14 · AssertionError: got <n> · POST api.x.test/v1/carts/{id} → 500")
        #expect(
            FailureSignature.make(place: nil, said: said("\n\n  \ntook 250ms, 0.53s, 12KiB"), exchange: nil)
                == "took <n>ms, <n>s, <n>KiB")
        // Two failures with one cause in different tests and runs share it; the test's own id in it is <test>.
        #expect(
            FailureSignature.make(
                place: ("a.py", 3), said: said("id 41 at 10.0.0.7:9000 in cart-a"), exchange: nil, test: "cart-a")
                == FailureSignature.make(
                    place: ("a.py", 3), said: said("id 977 at 10.0.0.9:9001 in cart-b"), exchange: nil, test: "cart-b"))
        #expect(
            FailureSignature.make(
                place: nil, said: said("no result for tests/x.py::test_y (login)"), exchange: nil,
                test: "tests/x.py::test_y")
                == "no result for <test> (login)")
        #expect(
            FailureSignature.make(place: nil, said: said("login refused"), exchange: nil, test: "login")
                == "login refused")
        // orchestrate's own words are not made alike, and alone they are the test's own.
        let own = FailureSignature.Said("exited with status 22", byTest: false)
        #expect(
            FailureSignature.make(place: nil, said: own, exchange: nil, test: "pay") == "exited with status 22 · pay")
        #expect(
            FailureSignature.make(place: nil, said: own, exchange: "GET api.x.test/v1/pay → 503", test: "pay")
                == "exited with status 22 · GET api.x.test/v1/pay → 503")
    }

    @Test(
        "hostile text: escape sequences and control characters go, a line of megabytes is cut to what is kept")
    func hostile() {
        let coloured =
            "\u{1B}[1;31mFAILED\u{1B}[0m expected 3\u{07} \u{1B}]8;;http://x.test\u{07}link\u{1B}]8;;\u{07} \u{202E}evil"
        let signature = FailureSignature.make(place: nil, said: .init(coloured, byTest: true), exchange: nil)
        #expect(signature == "FAILED expected <n> link evil", "\(signature.unicodeScalars.map(\.value))")
        #expect(!signature.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
        let huge = String(repeating: "1234567890 ", count: 1_000_000)
        let long = FailureSignature.make(place: nil, said: .init(huge + "\nnext", byTest: true), exchange: nil)
        #expect(long.count == FailureSignature.messageLimit && long.hasPrefix("<n> <n> "))
        #expect(FailureSignature.make(place: nil, said: .init("\r\n9\r\n", byTest: true), exchange: nil) == "<n>")
    }

    @Test("an endpoint is the host and path, each segment that names one thing an id, without the query")
    func endpoint() {
        #expect(
            FailureSignature.endpoint(
                method: "GET", host: "api.x.test", url: "https://api.x.test/v1/carts/42/items?token=s3cret")
                == "GET api.x.test/v1/carts/{id}/items")
        #expect(
            FailureSignature.endpoint(method: "POST", host: "api.x.test", url: "/api.x.test/v2/orders/deadbeef01")
                == "POST api.x.test/v2/orders/{id}")
        #expect(
            FailureSignature.endpoint(method: "GET", host: "api.x.test", url: "/api.x.test/v1/users/ann/settings")
                == "GET api.x.test/v1/users/ann/settings")
        #expect(
            FailureSignature.endpoint(request: "GET api.x.test/v1/carts/42?b=1&a=2") == "GET api.x.test/v1/carts/{id}")
        #expect(FailureSignature.endpoint(request: "POST https://api.x.test:8443/v1/pay") == "POST api.x.test/v1/pay")
        #expect(FailureSignature.endpoint(request: "GET /api.x.test/v1/news") == "GET api.x.test/v1/news")
        #expect(FailureSignature.endpoint(request: "GET api.x.test") == "GET api.x.test/")
        #expect(FailureSignature.endpoint(request: "nothing") == nil)
    }

    @Test(
        "a failed attempt's message: the runner's failure, else its failing step, else its last line of standard error, else orchestrate's own words"
    )
    func message() {
        var attempt = AttemptRecord(
            id: 1, runID: UUID(), scenarioID: "t", attempt: 1, state: .finished, outcome: .failed, exitCode: 22,
            signal: nil, worker: nil, startedAt: nil, finishedAt: nil, durationMilliseconds: 40, stdout: "",
            stderr: "  % Total\ncurl: (22) The requested URL returned error: 502\n\u{1B}[0m\n", error: nil)
        #expect(
            FailureSignature.message(attempt) == .init("curl: (22) The requested URL returned error: 502", byTest: true)
        )
        #expect(
            FailureSignature.message(attempt, failingStep: "When I pay: card declined")
                == .init("When I pay: card declined", byTest: true),
            "a failing step says more than the process's last words")
        attempt.error = "AssertionError: got 2"
        #expect(FailureSignature.message(attempt) == .init("AssertionError: got 2", byTest: true))
        attempt.error = nil
        attempt.stderr = ""
        #expect(FailureSignature.message(attempt) == .init("exited with status 22", byTest: false))
        attempt.outcome = .timedOut
        attempt.stderr = "still waiting"
        #expect(FailureSignature.message(attempt) == .init("timed out", byTest: false))
        attempt.outcome = .crashed
        attempt.signal = 11
        #expect(FailureSignature.message(attempt) == .init("crashed with signal 11", byTest: false))
    }
}
