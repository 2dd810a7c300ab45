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
        let signature = FailureSignature.make(
            place: ("tests/test_cart.py", 14), message: "tests/test_cart.py:14: AssertionError: got 2\nmore detail",
            exchange: "POST api.x.test/v1/carts/{id} → 500")
        #expect(signature == "tests/test_cart.py:14 · AssertionError: got <n> · POST api.x.test/v1/carts/{id} → 500")
        #expect(
            FailureSignature.make(place: nil, message: "\n\n  \ntimed out after 1003 ms", exchange: nil)
                == "timed out after <n> ms")
        let long = FailureSignature.make(place: nil, message: String(repeating: "x", count: 1000), exchange: nil)
        #expect(long.count == FailureSignature.messageLimit)
        // Two failures with one cause in different tests and runs share it.
        #expect(
            FailureSignature.make(place: ("a.py", 3), message: "id 41 at 10.0.0.7:9000", exchange: nil)
                == FailureSignature.make(place: ("a.py", 3), message: "id 977 at 10.0.0.9:9001", exchange: nil))
    }

    @Test("an endpoint is the host and path, each segment that names one thing an id, without the query")
    func endpoint() {
        #expect(
            FailureSignature.endpoint(
                method: "GET", host: "api.x.test", url: "https://api.x.test/v1/carts/42/items?token=s3cret")
                == "GET api.x.test/v1/carts/{id}/items")
        #expect(
            FailureSignature.endpoint(method: "POST", host: "api.x.test", url: "/api.x.test/v2/orders/6f1c2a3e")
                == "POST api.x.test/v2/orders/{id}")
    }

    @Test(
        "a failed attempt's message: the runner's failure, else its failing step, else its last line of standard error, else its summary"
    )
    func message() {
        var attempt = AttemptRecord(
            id: 1, runID: UUID(), scenarioID: "t", attempt: 1, state: .finished, outcome: .failed, exitCode: 22,
            signal: nil, worker: nil, startedAt: nil, finishedAt: nil, durationMilliseconds: 40, stdout: "",
            stderr: "  % Total\ncurl: (22) The requested URL returned error: 502\n\n", error: nil)
        #expect(FailureSignature.message(attempt) == "curl: (22) The requested URL returned error: 502")
        #expect(
            FailureSignature.message(attempt, failingStep: "When I pay: card declined") == "When I pay: card declined",
            "a failing step says more than the process's last words")
        attempt.error = "AssertionError: got 2"
        #expect(FailureSignature.message(attempt) == "AssertionError: got 2")
        attempt.error = nil
        attempt.stderr = ""
        #expect(FailureSignature.message(attempt) == "exited with status 22")
        attempt.outcome = .timedOut
        attempt.stderr = "still waiting"
        #expect(FailureSignature.message(attempt) == "timed out after 40 ms")
    }
}
