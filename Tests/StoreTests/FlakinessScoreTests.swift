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

    /// Stores each attempt as a finished run of its own, a minute apart and in order, ending `end` ago.
    static func record(_ attempts: [Attempt], of scenario: String, in database: Database, end: TimeInterval = 60) async throws {
        let runs = RunStore(database: database)
        let start = Date().addingTimeInterval(-end - Double(attempts.count) * 60)
        for (index, attempt) in attempts.enumerated() {
            let plan = RunPlan(
                host: "test", gitRevision: attempt.revision, workingDirectory: "/tmp", configPath: nil, mode: attempt.mode,
                workers: 1, retries: 0, scenarios: [Scenario(id: scenario, name: scenario, command: "true", timeoutMilliseconds: 1000)]
            )
            try await runs.create(plan)
            let finished = start.addingTimeInterval(Double(index) * 60)
            try await database.client.query(
                """
                UPDATE attempts SET state = 'finished', outcome = \(attempt.passed ? "passed" : "failed"), finished_at = \(finished),
                    started_at = \(finished), duration_ms = 1000
                WHERE run_id = \(plan.id)
                """
            )
            try await runs.setState(plan.id, .finished)
        }
    }

    static func score(of scenario: String, in database: Database, since: TimeInterval = 86_400) async throws -> FlakinessLine? {
        try await RunStore(database: database).flakiness(project: RunStore.defaultProject, since: Date().addingTimeInterval(-since), limit: 100)
            .first { $0.scenarioId == scenario }
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
        let (outcomes, transitions, flips, expected) = (example.outcomes, example.transitions, example.flips, example.score)
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
            // A revision that broke it and the next that fixed it: P F on r1, F P on r2 are one flip each, not P F F P's two
            // flips in three pairs.
            try await Self.record(Self.attempts("PF", revision: "r1") + Self.attempts("FP", revision: "r2"), of: "revisions", in: database)
            // Replay always passes and live always fails, taking turns: no flip in either kind of backend.
            let alternating = (0..<6).flatMap { _ in
                [Attempt(revision: "r1", mode: .replay, passed: true), Attempt(revision: "r1", mode: .live, passed: false)]
            }
            try await Self.record(alternating, of: "backends", in: database)
            // Record is live's kind of backend, mock and hybrid are replay's.
            try await Self.record(
                [
                    Attempt(revision: "r1", mode: .record, passed: true), Attempt(revision: "r1", mode: .mock, passed: false),
                    Attempt(revision: "r1", mode: .live, passed: true), Attempt(revision: "r1", mode: .hybrid, passed: false),
                ], of: "kinds", in: database)
            let revisions = try #require(try await Self.score(of: "revisions", in: database))
            #expect(revisions.transitions == 2 && revisions.flips == 2 && abs(revisions.score - 3.0 / 12) < 1e-12, "\(revisions)")
            let backends = try #require(try await Self.score(of: "backends", in: database))
            #expect(backends.transitions == 10 && backends.flips == 0, "\(backends)")
            #expect(backends.lanes["replay"] == PassTally(attempts: 6, passed: 6) && backends.lanes["live"] == PassTally(attempts: 6, passed: 0))
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
            #expect(lines.map(\.scenarioId) == ["recent-flips", "old-flips"])
            #expect(lines.last?.attempts == 3 && lines.last?.flips == 0)
            let all = try #require(try await Self.score(of: "old-flips", in: database, since: 30 * 86_400))
            #expect(all.attempts == 9 && all.flips == 6, "P F P F P F, then P P P: \(all)")
        }
    }
}
