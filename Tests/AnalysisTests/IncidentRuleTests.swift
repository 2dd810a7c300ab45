import Analysis
import Foundation
import OrchestrateModel
import Testing

@Suite("Infrastructure incidents")
struct IncidentRuleTests {
    /// `failed` failing attempts (ids 1…) and `passed` passing ones (ids 100…), one test each.
    static func attempts(failed: Int, passed: Int) -> [IncidentRule.Attempt] {
        (1..<failed + 1).map { IncidentRule.Attempt(id: Int64($0), scenarioID: "t\($0)", attempt: 1, passed: false) }
            + (0..<passed).map {
                IncidentRule.Attempt(id: Int64(100 + $0), scenarioID: "p\($0)", attempt: 1, passed: true)
            }
    }

    /// An attempt's failures of `host`, at `second` seconds into the run.
    static func sighting(_ attempt: Int64, _ host: String = "api.test", second: Double = 0) -> IncidentRule.Sighting {
        let at = Date(timeIntervalSince1970: 1_700_000_000 + second)
        return IncidentRule.Sighting(
            attemptID: attempt, host: host, noAnswers: 2, serverErrors: 1,
            first: (at, "GET \(host)/v1/a → no answer (upstream error: refused)"),
            last: (at.addingTimeInterval(0.5), "GET \(host)/v1/b → 503"))
    }

    @Test("most failures sharing one host's outage are one incident, named with its first and last failure and tests")
    func outage() throws {
        let (incidents, explained) = IncidentRule.incidents(
            attempts: Self.attempts(failed: 5, passed: 20),
            sightings: (1...4).map { Self.sighting(Int64($0), second: Double($0)) })
        let incident = try #require(incidents.first)
        #expect(incidents.count == 1)
        #expect(incident.number == 1 && incident.host == "api.test" && incident.attempts == 4)
        #expect(incident.scenarioIDs == ["t1", "t2", "t3", "t4"])
        #expect(incident.noAnswers == 8 && incident.serverErrors == 4)
        #expect(incident.first.scenarioID == "t1" && incident.first.exchange.hasPrefix("GET api.test/v1/a → no answer"))
        #expect(incident.last.scenarioID == "t4" && incident.last.exchange == "GET api.test/v1/b → 503")
        #expect(explained == [1: 1, 2: 1, 3: 1, 4: 1], "t5 failed on its own: not the incident's")
        #expect(
            incident.headline
                == "infrastructure incident 1: api.test did not answer 8 times and answered 5xx 4 times, in 4 failed attempts of 4 tests"
        )
    }

    @Test("fewer than three failed attempts, or fewer than half of the failures, are no incident")
    func tooFew() {
        let two = IncidentRule.incidents(
            attempts: Self.attempts(failed: 2, passed: 0), sightings: [Self.sighting(1), Self.sighting(2)])
        #expect(two.incidents.isEmpty && two.explained.isEmpty)
        // Three of ten failures: the other seven are something else, which the host must not hide.
        let minority = IncidentRule.incidents(
            attempts: Self.attempts(failed: 10, passed: 0), sightings: (1...3).map { Self.sighting(Int64($0)) })
        #expect(minority.incidents.isEmpty)
        let half = IncidentRule.incidents(
            attempts: Self.attempts(failed: 6, passed: 0), sightings: (1...3).map { Self.sighting(Int64($0)) })
        #expect(half.incidents.count == 1, "exactly half is enough")
    }

    @Test("a host whose failures passing attempts met as often is tolerated by the app: not what failed the tests")
    func tolerated() {
        // Every attempt, passing or not, met the analytics host's 503s.
        let attempts = Self.attempts(failed: 4, passed: 4)
        let sightings = attempts.map { Self.sighting($0.id, "analytics.test") }
        #expect(IncidentRule.incidents(attempts: attempts, sightings: sightings).incidents.isEmpty)
        // Passing attempts met it less than half as often (1 of 4 against 4 of 4): an outage the app sometimes got past.
        let rarely = IncidentRule.incidents(
            attempts: attempts, sightings: (1...4).map { Self.sighting(Int64($0)) } + [Self.sighting(100)])
        #expect(rarely.incidents.count == 1 && rarely.explained.count == 4, "passing attempts are never explained")
    }

    @Test(
        "two hosts down are two incidents, numbered as they began; an attempt that met both belongs to the first, and a host left with fewer than three is none"
    )
    func twoHosts() {
        let sightings =
            (1...4).map { Self.sighting(Int64($0), "pay.test", second: 10) }
            + (4...7).map { Self.sighting(Int64($0), "api.test", second: 1) }
        let (incidents, explained) = IncidentRule.incidents(
            attempts: Self.attempts(failed: 7, passed: 0), sightings: sightings)
        #expect(incidents.map(\.host) == ["api.test", "pay.test"])
        #expect(incidents.map(\.number) == [1, 2])
        #expect(explained[4] == 1 && explained[1] == 2 && explained[7] == 1)
        #expect(incidents[1].attempts == 3 && incidents[1].scenarioIDs == ["t1", "t2", "t3"])
        // With one more attempt the first took, the second keeps two: not an incident; its two stay unexplained.
        let crowded = IncidentRule.incidents(
            attempts: Self.attempts(failed: 7, passed: 0),
            sightings: sightings + [Self.sighting(3, "api.test", second: 1)])
        #expect(crowded.incidents.map(\.host) == ["api.test"])
        #expect(crowded.explained[1] == nil && crowded.explained[3] == 1)
    }

    @Test("sightings of attempts the run does not have are ignored")
    func unknownAttempts() {
        let (incidents, _) = IncidentRule.incidents(
            attempts: Self.attempts(failed: 3, passed: 0),
            sightings: [Self.sighting(1), Self.sighting(900), Self.sighting(901)])
        #expect(incidents.isEmpty)
    }
}
