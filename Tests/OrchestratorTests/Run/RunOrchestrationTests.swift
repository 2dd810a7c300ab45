import Coordinator
import Foundation
import Logging
import OrchestrateModel
import OrchestrateTesting
import Orchestrator
import Store
import Synchronization
import Testing

/// What a run said, for tests: every call of its ``RunOutput``.
final class RecordedOutput: RunOutput {
    struct Said: Sendable {
        var expected: [String: Int64?]?
        var workers = 0
        var finishedAttempts: [String] = []
        var finished = false
        var notes: [String] = []
        var summary: String?
    }

    let said = Mutex(Said())

    func started(expected: [String: Int64?], workers: Int) {
        said.withLock {
            $0.expected = expected
            $0.workers = workers
        }
    }

    func handle(_ event: CoordinatorEvent) {
        guard case .attemptFinished(_, let attempt, let result, _) = event else { return }
        said.withLock { $0.finishedAttempts.append("\(attempt.scenario.id) \(result.outcome.rawValue)") }
    }

    func tick() {}
    func finished() { said.withLock { $0.finished = true } }
    func note(_ line: String) { said.withLock { $0.notes.append(line) } }
    func summary(_ text: String) { said.withLock { $0.summary = text } }
}

@Suite("orchestrate run's phases")
struct RunOrchestrationTests {
    static let logger = Logger(label: "test")

    static func options(_ directory: TemporaryDirectory, database: String) -> RunOptions {
        var options = RunOptions()
        options.configPath = directory.file("orchestrate.yml")
        options.database = database
        // The test process's signals stay its own.
        options.trapsSignals = false
        return options
    }

    @Test(
        "plan, execute, judge, report: the output hears the plan, every attempt and the summary; the exit code says a scenario failed"
    )
    func phases() async throws {
        try await TemporaryDirectory.with { directory in
            try directory.write(
                "orchestrate.yml",
                """
                workers: 2
                quarantine: { threshold: off }
                suite:
                  scenarios:
                    - { id: passes, command: "true" }
                    - { id: fails, command: "exit 3" }
                """)
            let output = RecordedOutput()
            let database = try await TestPostgres.shared.makeDatabaseURL()
            let code = try await RunOrchestration.run(
                Self.options(directory, database: database), output: output, logger: Self.logger)
            #expect(code == ExitStatus.scenarioFailed)
            let said = output.said.withLock { $0 }
            #expect(said.workers == 2 && said.expected?.keys.sorted() == ["fails", "passes"] && said.finished)
            #expect(said.finishedAttempts.sorted() == ["fails failed", "passes passed"])
            #expect(said.summary?.contains("2 scenarios, 1 passed, 1 failed") == true, "\(said.summary ?? "")")
            #expect(said.summary?.contains("fails  failing: fails") == true, "\(said.summary ?? "")")
            #expect(said.notes.isEmpty)
        }
    }

    @Test("a planned run that nobody worked is finished by resuming it; an unknown run is a usage error")
    func resume() async throws {
        try await TemporaryDirectory.with { directory in
            try directory.write(
                "orchestrate.yml",
                """
                suite:
                  scenarios:
                    - { id: one, command: "true" }
                    - { id: two, command: "true" }
                """)
            let database = try await TestPostgres.shared.makeDatabaseURL()
            let settings = try RunSettings.resolve(Self.options(directory, database: database))
            let planned = try await ProjectDatabase.open(settings.database, logger: Self.logger) {
                database -> RunPlanner.Planned in
                let plan = RunPlanner.plan(try await settings.scenarios(), settings: settings, git: (nil, nil))
                return try await RunPlanner(runs: RunStore(database: database), output: RecordedOutput()).store(plan)
            }
            #expect(planned.expected == ["one": nil, "two": nil] && planned.plan?.scenarios.count == 2)
            var options = Self.options(directory, database: database)
            options.resume = planned.runID
            let output = RecordedOutput()
            #expect(try await RunOrchestration.run(options, output: output, logger: Self.logger) == ExitStatus.passed)
            let said = output.said.withLock { $0 }
            #expect(said.notes == ["resuming run \(planned.runID.uuidString.lowercased()): 2 scenario(s) left"])
            #expect(said.finishedAttempts.sorted() == ["one passed", "two passed"])

            options.resume = UUID()
            await #expect(throws: UsageError.self) {
                try await RunOrchestration.run(options, output: RecordedOutput(), logger: Self.logger)
            }
        }
    }
}
