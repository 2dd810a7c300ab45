import struct Foundation.Date

/// An upstream's outage in a run, reported once rather than as the failures it caused: many of the run's failed
/// attempts met the same host's failures (no answer, or a 5xx it answered itself), which passing attempts did not meet
/// as often (``IncidentRule`` in Analysis). The attempts it hit count in no flakiness score, no quarantine and no
/// later verdict; a run whose only failures it explains exits 3 (infrastructure).
package struct Incident: Sendable, Codable, Equatable {
    /// 1-based, in the order the incidents began.
    package var number: Int
    /// The host the app addressed (`api.x.test`).
    package var host: String
    /// Its failures in the attempts it hit: exchanges it did not answer, and 5xx it answered.
    package var noAnswers: Int
    package var serverErrors: Int
    /// The failed attempts it hit.
    package var attempts: Int
    /// The tests those attempts belong to, sorted.
    package var scenarioIDs: [String]
    package var first: Sighting
    package var last: Sighting

    /// One of its failing exchanges: when, what (``RetryEvidence``'s line: `GET api.x.test/v1/pay → 503 at step 3`), and
    /// in which attempt.
    package struct Sighting: Sendable, Codable, Equatable {
        package var at: Date
        package var exchange: String
        package var scenarioID: String
        package var attempt: Int

        package init(at: Date, exchange: String, scenarioID: String, attempt: Int) {
            self.at = at
            self.exchange = exchange
            self.scenarioID = scenarioID
            self.attempt = attempt
        }
    }

    package init(
        number: Int, host: String, noAnswers: Int, serverErrors: Int, attempts: Int, scenarioIDs: [String],
        first: Sighting, last: Sighting
    ) {
        self.number = number
        self.host = host
        self.noAnswers = noAnswers
        self.serverErrors = serverErrors
        self.attempts = attempts
        self.scenarioIDs = scenarioIDs
        self.first = first
        self.last = last
    }

    /// `infrastructure incident 1: api.test did not answer 12 times and answered 5xx 3 times, in 14 failed attempts
    /// of 6 tests`.
    package var headline: String {
        func times(_ count: Int) -> String { count == 1 ? "once" : "\(count) times" }
        let what = [
            noAnswers > 0 ? "did not answer \(times(noAnswers))" : nil,
            serverErrors > 0 ? "answered 5xx \(times(serverErrors))" : nil,
        ].compactMap { $0 }.joined(separator: " and ")
        let tests = scenarioIDs.count
        return
            "infrastructure incident \(number): \(host) \(what), in \(attempts) failed attempt\(attempts == 1 ? "" : "s") of \(tests) test\(tests == 1 ? "" : "s")"
    }

    /// `GET api.test/v1/items → no answer (…) in checkout, attempt 1, at 10:04:01.123 UTC`.
    package static func describe(_ sighting: Sighting) -> String {
        "\(sighting.exchange) in \(sighting.scenarioID), attempt \(sighting.attempt), at \(UTCTime.string(sighting.at))"
    }
}

extension RunReport.ScenarioEntry {
    /// The incident its failures belong to: set when every failed attempt of the test in this run was one an incident hit
    /// (the last one's); `nil` when it did not fail or one of its failures was its own.
    package var incident: Int? {
        let failed = attempts.filter { $0.failed }
        guard let last = failed.last, failed.allSatisfy({ $0.incident != nil }) else { return nil }
        return last.incident
    }
}

/// A time of day in UTC with milliseconds (`10:04:01.123 UTC`), without a formatter.
package enum UTCTime {
    package static func string(_ date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        let day = ((milliseconds % 86_400_000) + 86_400_000) % 86_400_000
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let fraction = day % 1000
        let three = fraction < 10 ? "00\(fraction)" : fraction < 100 ? "0\(fraction)" : "\(fraction)"
        return "\(two(day / 3_600_000)):\(two(day / 60_000 % 60)):\(two(day / 1000 % 60)).\(three) UTC"
    }
}
