import Foundation
import OrchestrateModel
import Testing

/// `retries.when: evidence`: what in a failed attempt shows a cause outside the test.
@Suite("Evidence for a retry")
struct RetryEvidenceTests {
    static func exchange(
        _ status: Int?, mode: Mode = .live, matched: Bool = true, step: Int? = 2, milliseconds: Int64 = 30,
        note: ExchangeNote? = nil, url: String = "https://api.x.test/v1/pay?token=s3cret"
    ) -> Exchange {
        Exchange(
            sequence: 1, mode: mode, matched: matched, host: "api.x.test", method: "POST", url: url,
            requestHeaders: [], requestBody: [], status: status, responseHeaders: [], responseBody: [],
            startedAt: Date(), durationMicroseconds: milliseconds * 1000, note: note, stepPosition: step)
    }

    @Test("the backend's own 5xx, 429, no answer or slow answer at the failing step is evidence; the query is left out")
    func evidence() {
        #expect(
            RetryEvidence.exchange(in: [Self.exchange(503)], failingStep: 2) == "POST api.x.test/v1/pay → 503 at step 2"
        )
        #expect(
            RetryEvidence.exchange(in: [Self.exchange(429)], failingStep: 2) == "POST api.x.test/v1/pay → 429 at step 2"
        )
        #expect(
            RetryEvidence.exchange(
                in: [
                    Self.exchange(
                        502, matched: false, note: ExchangeNote(rawValue: "upstream error: connection refused"))
                ],
                failingStep: 2) == "POST api.x.test/v1/pay → no answer (upstream error: connection refused) at step 2")
        #expect(
            RetryEvidence.exchange(in: [Self.exchange(200, milliseconds: 6_250)], failingStep: 2)
                == "POST api.x.test/v1/pay → 200 after 6.2 s at step 2")
        // Recorded against the live backend (record mode) counts too; no step known: the whole attempt.
        #expect(RetryEvidence.exchange(in: [Self.exchange(500, mode: .record, step: nil)], failingStep: nil) != nil)
    }

    @Test("a recording's or a stub's answer, a quick 2xx or 4xx, or a failure at another step is no evidence")
    func noEvidence() {
        #expect(RetryEvidence.exchange(in: [Self.exchange(503, mode: .replay, matched: true)], failingStep: 2) == nil)
        #expect(RetryEvidence.exchange(in: [Self.exchange(503, mode: .mock, matched: true)], failingStep: 2) == nil)
        #expect(RetryEvidence.exchange(in: [Self.exchange(503, note: .stub)], failingStep: 2) == nil)
        #expect(
            RetryEvidence.exchange(in: [Self.exchange(502, matched: false, note: .hostNotConfigured)], failingStep: 2)
                == nil)
        #expect(RetryEvidence.exchange(in: [Self.exchange(200), Self.exchange(404)], failingStep: 2) == nil)
        #expect(RetryEvidence.exchange(in: [Self.exchange(503, step: 1)], failingStep: 2) == nil)
        #expect(RetryEvidence.exchange(in: [], failingStep: nil) == nil)
    }

    @Test("a crash, a timeout or an infrastructure error is evidence of itself; an exit status is not")
    func outcomes() {
        #expect(
            RetryEvidence.outcome(AttemptResult(outcome: .crashed, signal: 11, durationMilliseconds: 5)) == "the crash")
        #expect(
            RetryEvidence.outcome(
                AttemptResult(outcome: .timedOut, durationMilliseconds: 1000, error: "timed out after 1000 ms"))
                == "the timeout")
        #expect(RetryEvidence.outcome(AttemptResult(outcome: .failed, exitCode: 1, durationMilliseconds: 5)) == nil)
        #expect(RetryEvidence.outcome(AttemptResult(outcome: .passed, durationMilliseconds: 5)) == nil)
    }

    @Test(
        "an attempt's notable exchanges are bounded, a few per step, without bodies: an early step's cannot crowd out the failing step's"
    )
    func notable() {
        var notable = RetryEvidence.Notable()
        var big = Self.exchange(429, step: 1)
        big.responseBody = Array(repeating: 65, count: 100_000)
        for _ in 0..<100 { notable.note(big) }
        notable.note(Self.exchange(200, step: 2))
        notable.note(Self.exchange(503, step: 2))
        #expect(notable.exchanges.count == RetryEvidence.Notable.perStep + 1)
        #expect(notable.exchanges.allSatisfy { $0.responseBody.isEmpty })
        #expect(
            RetryEvidence.exchange(in: notable.exchanges, failingStep: 2) == "POST api.x.test/v1/pay → 503 at step 2")
        for step in 3..<200 { notable.note(Self.exchange(500, step: step)) }
        #expect(notable.exchanges.count == RetryEvidence.Notable.capacity)
    }
}
