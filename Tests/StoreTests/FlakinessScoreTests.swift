import Foundation
import OrchestrateModel
import OrchestrateTesting
import PostgresNIO
import Store
import Testing

/// The flakiness score as `orchestrate flaky` and automatic quarantine get it: computed by PostgreSQL over attempts as
/// runs leave them.
@Suite("Flakiness score")
struct FlakinessScoreTests {
    /// One finished attempt: on a revision, against a kind of backend, passed or not.
    struct Attempt {
        var revision: String
        var mode: Mode
        var passed: Bool
    }

    static func attempts(_ outcomes: String, revision: String = "r1", mode: Mode = .replay) -> [Attempt] {
        outcomes.map { Attempt(revision: revision, mode: mode, passed: $0 == "P") }
    }

    /// Stores each attempt as a finished run of its own, a minute apart and in order, ending `end` ago (or at `times`),
    /// on `branch`; the runs settle one after another unless `settle` is false. Returns the runs.
    @discardableResult
    static func record(
        _ attempts: [Attempt], of scenario: String, in database: Database, end: TimeInterval = 60, times: [Date]? = nil,
        branch: String? = nil,
        settle: Bool = true
    ) async throws -> [UUID] {
        let runs = RunStore(database: database)
        let start = Date().addingTimeInterval(-end - Double(attempts.count) * 60)
        var made: [UUID] = []
        for (index, attempt) in attempts.enumerated() {
            let plan = RunPlan(
                host: "test", gitRevision: attempt.revision, workingDirectory: "/tmp", configPath: nil,
                mode: attempt.mode,
                workers: 1, retries: 0,
                scenarios: [Scenario(id: scenario, name: scenario, command: "true", timeoutMilliseconds: 1000)]
            )
            try await runs.create(plan)
            let finished = times?[index] ?? start.addingTimeInterval(Double(index) * 60)
            try await database.client.query(
                """
                UPDATE attempts SET state = 'finished', outcome = \(attempt.passed ? "passed" : "failed"), finished_at = \(finished),
                    started_at = \(finished), duration_ms = 1000
                WHERE run_id = \(plan.id)
                """
            )
            try await database.client.query("UPDATE runs SET branch = \(branch) WHERE id = \(plan.id)")
            if settle { try await runs.setState(plan.id, .finished) }
            made.append(plan.id)
        }
        return made
    }

    static func score(
        of scenario: String, in database: Database, since: TimeInterval = 86_400
    ) async throws -> FlakinessLine? {
        try await RunStore(database: database).flakiness(
            project: RunStore.defaultProject, since: Date().addingTimeInterval(-since), limit: 100
        )
        .first { $0.scenarioID == scenario }
    }

    /// Outcomes in order, with the transitions and flips they make and the score that follows.
    struct Case: Sendable, CustomTestStringConvertible {
        var outcomes: String
        var transitions: Int
        var flips: Int
        var score: Double
        var testDescription: String { outcomes }
    }

    static let cases: [Case] = [
        Case(outcomes: "P", transitions: 0, flips: 0, score: 1.0 / 10),
        Case(outcomes: "PPPPPPPPPPP", transitions: 10, flips: 0, score: 1.0 / 20),
        Case(outcomes: "PFPFPFPFPFP", transitions: 10, flips: 10, score: 11.0 / 20),
        Case(outcomes: "FPF", transitions: 2, flips: 2, score: 3.0 / 12),
        Case(outcomes: "FFFPPP", transitions: 5, flips: 1, score: 2.0 / 15),
    ]

    @Test("the score is (flips + 1) / (transitions + 10) over consecutive attempts", arguments: cases)
    func formula(_ example: Case) async throws {
        let (outcomes, transitions, flips, expected) = (
            example.outcomes, example.transitions, example.flips, example.score
        )
        try await withTestDatabase { database in
            try await Self.record(Self.attempts(outcomes), of: "s", in: database)
            let line = try #require(try await Self.score(of: "s", in: database))
            #expect(line.transitions == transitions && line.flips == flips, "\(line)")
            #expect(abs(line.score - expected) < 1e-12, "\(line.score)")
            #expect(line.attempts == outcomes.count && line.passed == outcomes.filter { $0 == "P" }.count)
        }
    }

    @Test("only attempts on the same revision and the same kind of backend are paired")
    func pairs() async throws {
        try await withTestDatabase { database in
            // A revision that broke it and the next that fixed it: P F on r1, F P on r2 are one flip each, not P F F
            // P's two flips in three pairs.
            try await Self.record(
                Self.attempts("PF", revision: "r1") + Self.attempts("FP", revision: "r2"), of: "revisions", in: database
            )
            // Replay always passes and live always fails, taking turns: no flip in either kind of backend.
            let alternating = (0..<6).flatMap { _ in
                [
                    Attempt(revision: "r1", mode: .replay, passed: true),
                    Attempt(revision: "r1", mode: .live, passed: false),
                ]
            }
            try await Self.record(alternating, of: "backends", in: database)
            // Record is live's kind of backend, mock and hybrid are replay's.
            try await Self.record(
                [
                    Attempt(revision: "r1", mode: .record, passed: true),
                    Attempt(revision: "r1", mode: .mock, passed: false),
                    Attempt(revision: "r1", mode: .live, passed: true),
                    Attempt(revision: "r1", mode: .hybrid, passed: false),
                ], of: "kinds", in: database)
            let revisions = try #require(try await Self.score(of: "revisions", in: database))
            #expect(
                revisions.transitions == 2 && revisions.flips == 2 && abs(revisions.score - 3.0 / 12) < 1e-12,
                "\(revisions)")
            let backends = try #require(try await Self.score(of: "backends", in: database))
            #expect(backends.transitions == 10 && backends.flips == 0, "\(backends)")
            #expect(
                backends.lanes["replay"] == PassTally(attempts: 6, passed: 6)
                    && backends.lanes["live"] == PassTally(attempts: 6, passed: 0))
            let kinds = try #require(try await Self.score(of: "kinds", in: database))
            #expect(kinds.transitions == 2 && kinds.flips == 0, "\(kinds)")
        }
    }

    @Test("the window leaves out older attempts, and the flakiest comes first")
    func window() async throws {
        try await withTestDatabase { database in
            // Alternating long ago, steady since.
            try await Self.record(Self.attempts("PFPFPF"), of: "old-flips", in: database, end: 10 * 86_400)
            try await Self.record(Self.attempts("PPP"), of: "old-flips", in: database)
            try await Self.record(Self.attempts("PFPF"), of: "recent-flips", in: database)
            let lines = try await RunStore(database: database).flakiness(
                project: RunStore.defaultProject, since: Date().addingTimeInterval(-86_400), limit: 10)
            #expect(lines.map(\.scenarioID) == ["recent-flips", "old-flips"])
            #expect(lines.last?.attempts == 3 && lines.last?.flips == 0)
            let all = try #require(try await Self.score(of: "old-flips", in: database, since: 30 * 86_400))
            #expect(all.attempts == 9 && all.flips == 6, "P F P F P F, then P P P: \(all)")
        }
    }

    /// Midnight UTC `days` days ago, plus `minutes`.
    static func utcMidnight(daysAgo days: Int, plus minutes: Double) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let today = calendar.startOfDay(for: Date())
        return today.addingTimeInterval(Double(-days) * 86_400 + minutes * 60)
    }

    @Test(
        "pairs span midnight, a window may start within a day, and the rollup kept as runs settle equals a full recount"
    )
    func acrossDays() async throws {
        try await withTestDatabase { database in
            // P F on one day, F P on the next: three pairs, one of them across midnight (F → F, no flip), two flips.
            let times = [-2.0, -1, 1, 2].map { Self.utcMidnight(daysAgo: 3, plus: $0) }
            try await Self.record(Self.attempts("PFFP"), of: "midnight", in: database, times: times)
            let all = try #require(try await Self.score(of: "midnight", in: database, since: 10 * 86_400))
            #expect(all.attempts == 4 && all.transitions == 3 && all.flips == 2, "\(all)")
            // P P | F F: the one flip is the pair across midnight.
            let flipAtMidnight = [-2.0, -1, 1, 2].map { Self.utcMidnight(daysAgo: 5, plus: $0) }
            try await Self.record(Self.attempts("PPFF"), of: "flip-at-midnight", in: database, times: flipAtMidnight)
            let across = try #require(try await Self.score(of: "flip-at-midnight", in: database, since: 10 * 86_400))
            #expect(across.transitions == 3 && across.flips == 1, "\(across)")
            // A window from between the first two attempts: F | F P, two pairs, one flip; the first day is partial.
            let lines = try await RunStore(database: database).flakiness(
                project: RunStore.defaultProject, since: Self.utcMidnight(daysAgo: 3, plus: -1.5), limit: 10)
            let partial = try #require(lines.first { $0.scenarioID == "midnight" })
            #expect(partial.attempts == 3 && partial.transitions == 2 && partial.flips == 1, "\(partial)")
            #expect(!lines.contains { $0.scenarioID == "flip-at-midnight" })

            // Runs that settle out of order (the later attempt's first) leave the rollup as a full recount would.
            let late = (0..<4).map { Self.utcMidnight(daysAgo: 1, plus: Double($0)) }
            let runs = try await Self.record(
                Self.attempts("PFPF"), of: "out-of-order", in: database, times: late, settle: false)
            for run in runs.reversed() { try await RunStore(database: database).setState(run, .finished) }
            let outOfOrder = try #require(try await Self.score(of: "out-of-order", in: database, since: 10 * 86_400))
            #expect(outOfOrder.transitions == 3 && outOfOrder.flips == 3, "\(outOfOrder)")
            let differences = try await rollupDifferences(in: database)
            #expect(differences.scenarioDays == 0 && differences.endpointDays == 0, "\(differences)")
        }
    }

    @Test(
        "a settled run adds its attempts to the day's rows; runs settled in order, again, together, out of order, or with an incident's attempts leave what a full recount gives"
    )
    func addedToNotCountedAgain() async throws {
        try await withTestDatabase { database in
            let store = RunStore(database: database)
            // Ten runs of one scenario today, a minute apart, settled in order: each adds to the row the last left.
            let times = (0..<10).map { Date().addingTimeInterval(Double($0 - 20) * 60) }
            let runs = try await Self.record(Self.attempts("PPFPFFPPPF"), of: "added", in: database, times: times)
            let added = try #require(try await Self.score(of: "added", in: database))
            #expect(added.attempts == 10 && added.passed == 6 && added.transitions == 9 && added.flips == 5, "\(added)")
            var differences = try await rollupDifferences(in: database)
            #expect(differences.scenarioDays == 0, "\(differences)")

            // A run rolled up again counts nothing twice.
            try await store.rollUp(runs[4])
            try await store.rollUp(runs[9])
            #expect(try await Self.score(of: "added", in: database)?.attempts == 10)

            // An attempt of an incident, marked after its run was counted, is left out when the run is counted again.
            try await database.client.query("UPDATE attempts SET incident = 1 WHERE run_id = \(runs[2])")
            try await store.rollUp(runs[2])
            let withoutIncident = try #require(try await Self.score(of: "added", in: database))
            #expect(withoutIncident.attempts == 9 && withoutIncident.passed == 6, "\(withoutIncident)")

            // Eight runs of two scenarios settling at once, and four more settling newest first.
            let later = (0..<12).map { Date().addingTimeInterval(Double($0 - 8) * 60 - 30) }
            var pending: [UUID] = []
            for scenario in ["together-a", "together-b"] {
                pending += try await Self.record(
                    Self.attempts("PFPPFFPFPPFP"), of: scenario, in: database, times: later, settle: false)
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for run in pending.prefix(8) + pending.dropFirst(12).prefix(8) {
                    group.addTask { try await store.setState(run, .finished) }
                }
                try await group.waitForAll()
            }
            for run in (pending[8..<12] + pending[20..<24]).reversed() { try await store.setState(run, .finished) }
            let together = try #require(try await Self.score(of: "together-a", in: database))
            #expect(together.attempts == 12 && together.transitions == 11 && together.flips == 8, "\(together)")
            differences = try await rollupDifferences(in: database)
            #expect(differences.scenarioDays == 0, "\(differences)")
        }
    }

    @Test(
        "attempts of a run that has not settled are not counted yet; branches pair apart, and --branch narrows to one")
    func settlingAndBranches() async throws {
        try await withTestDatabase { database in
            let times = (0..<4).map { Self.utcMidnight(daysAgo: 2, plus: Double($0)) }
            try await Self.record(Self.attempts("PPPP"), of: "steady", in: database, times: times)
            let unsettled = try await Self.record(
                Self.attempts("F"), of: "steady", in: database, times: [Self.utcMidnight(daysAgo: 2, plus: 10)],
                settle: false)
            #expect(try await Self.score(of: "steady", in: database, since: 10 * 86_400)?.attempts == 4)
            try await RunStore(database: database).setState(unsettled[0], .finished)
            let settled = try #require(try await Self.score(of: "steady", in: database, since: 10 * 86_400))
            #expect(settled.attempts == 5 && settled.flips == 1, "\(settled)")

            // main passes and a feature branch fails, taking turns on one revision: no flip on either branch.
            for index in 0..<6 {
                let time = [Self.utcMidnight(daysAgo: 1, plus: Double(index))]
                try await Self.record(
                    Self.attempts(index.isMultiple(of: 2) ? "P" : "F"), of: "branches", in: database, times: time,
                    branch: index.isMultiple(of: 2) ? "main" : "feature")
            }
            let both = try #require(try await Self.score(of: "branches", in: database, since: 10 * 86_400))
            #expect(both.attempts == 6 && both.transitions == 4 && both.flips == 0, "\(both)")
            let feature = try await RunStore(database: database).flakiness(
                project: RunStore.defaultProject, since: Date().addingTimeInterval(-10 * 86_400), branch: "feature",
                limit: 10)
            #expect(
                feature.map(\.scenarioID) == ["branches"] && feature.first?.passed == 0 && feature.first?.attempts == 3)
        }
    }
}
