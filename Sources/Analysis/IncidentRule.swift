import OrchestrateModel

import struct Foundation.Date

/// When many failures of a run are one upstream's outage (``Incident``). An attempt met a host's failure when the
/// backend itself was asked (live or record mode) and did not answer, or answered with a 502, 503 or 504 — a failed
/// attempt at its failing step, when it has one (``Sighting``). A 500 is no outage: it is the backend's answer to the
/// request, which a change to the app may have caused. A host is an incident when, among the run's finished attempts:
/// - at least ``minimumAttempts`` failed attempts met its failures: fewer are a flaky endpoint, which retries with
///   evidence (`retries.when: evidence`) deal with, and one incident says no more than one or two failures would;
/// - they are at least ``minimumShare`` of the failed attempts: the outage is what most failures have in common. A host
///   that failed under a few of many failures does not hide the others (a change that broke half the suite while a
///   backend stumbled twice is the change's);
/// - passing attempts met its failures less than half as often as failing ones did: failures the app tolerates (an
///   analytics host that is always down, a 503 the app retries past) are not what made the tests fail.
///
/// A 429 or a slow answer is not an outage (rate limits and latency are the test's environment, not a host that is
/// down); a stub's, a recording's or the mock server's own answers are not the upstream's. An attempt that met several
/// such hosts belongs to the incident whose first failure came first; a host left with fewer than ``minimumAttempts``
/// of its own is none.
package enum IncidentRule {
    package static let minimumAttempts = 3
    package static let minimumShare = 0.5

    /// A finished attempt of the run.
    package struct Attempt: Sendable, Equatable {
        package var id: Int64
        package var scenarioID: String
        package var attempt: Int
        package var passed: Bool

        package init(id: Int64, scenarioID: String, attempt: Int, passed: Bool) {
            self.id = id
            self.scenarioID = scenarioID
            self.attempt = attempt
            self.passed = passed
        }
    }

    /// One attempt's failures of one host: how many of each kind, and the first and last (``RetryEvidence``'s line
    /// and when).
    package struct Sighting: Sendable {
        package var attemptID: Int64
        package var host: String
        package var noAnswers: Int
        package var serverErrors: Int
        package var first: (at: Date, exchange: String)
        package var last: (at: Date, exchange: String)

        package init(
            attemptID: Int64, host: String, noAnswers: Int, serverErrors: Int, first: (at: Date, exchange: String),
            last: (at: Date, exchange: String)
        ) {
            self.attemptID = attemptID
            self.host = host
            self.noAnswers = noAnswers
            self.serverErrors = serverErrors
            self.first = first
            self.last = last
        }
    }

    /// The run's incidents, numbered in the order they began, and the failed attempts each explains (by attempt id).
    package static func incidents(
        attempts: [Attempt], sightings: [Sighting]
    ) -> (incidents: [Incident], explained: [Int64: Int]) {
        let byID = Dictionary(attempts.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let failed = attempts.count { !$0.passed }
        let passed = attempts.count - failed
        guard failed >= minimumAttempts else { return ([], [:]) }
        var candidates: [(host: String, sightings: [Sighting])] = []
        for (host, seen) in Dictionary(grouping: sightings.filter { byID[$0.attemptID] != nil }, by: \.host) {
            let failing = seen.filter { byID[$0.attemptID]?.passed == false }
            let passing = seen.count - failing.count
            let failedShare = Double(failing.count) / Double(failed)
            let passedShare = passed == 0 ? 0 : Double(passing) / Double(passed)
            guard failing.count >= minimumAttempts, failedShare >= minimumShare, passedShare < failedShare / 2 else {
                continue
            }
            candidates.append((host, failing))
        }
        // The incident that began first is number 1; an attempt that met several hosts goes to the earliest.
        candidates.sort {
            earliest($0.sightings) < earliest($1.sightings)
                || (earliest($0.sightings) == earliest($1.sightings) && $0.host < $1.host)
        }
        var explained: [Int64: Int] = [:]
        var incidents: [Incident] = []
        for (host, seen) in candidates {
            let own = seen.filter { explained[$0.attemptID] == nil }
            guard own.count >= minimumAttempts else { continue }
            let number = incidents.count + 1
            for sighting in own { explained[sighting.attemptID] = number }
            let first = own.min { ($0.first.at, $0.attemptID) < ($1.first.at, $1.attemptID) }!
            let last = own.max { ($0.last.at, $0.attemptID) < ($1.last.at, $1.attemptID) }!
            func sighting(_ seen: Sighting, _ end: (at: Date, exchange: String)) -> Incident.Sighting {
                let attempt = byID[seen.attemptID]!
                return Incident.Sighting(
                    at: end.at, exchange: end.exchange, scenarioID: attempt.scenarioID, attempt: attempt.attempt)
            }
            incidents.append(
                Incident(
                    number: number, host: host, noAnswers: own.reduce(0) { $0 + $1.noAnswers },
                    serverErrors: own.reduce(0) { $0 + $1.serverErrors }, attempts: own.count,
                    scenarioIDs: Set(own.compactMap { byID[$0.attemptID]?.scenarioID }).sorted(),
                    first: sighting(first, first.first), last: sighting(last, last.last)))
        }
        return (incidents, explained)
    }

    private static func earliest(_ sightings: [Sighting]) -> Date {
        sightings.map(\.first.at).min() ?? .distantFuture
    }
}
