import Foundation
import Logging
import OrchestrateModel
import Store

/// The first phase of a run: plan it in the database (its scenarios, with expected durations from history, and their
/// first attempts), or take up an interrupted one where it stopped.
package struct RunPlanner {
    let runs: RunStore
    let output: any RunOutput

    package init(runs: RunStore, output: any RunOutput) {
        self.runs = runs
        self.output = output
    }

    /// A run ready to be worked.
    package struct Planned: Sendable {
        package var runID: UUID
        /// Where its commands run (a resumed run keeps the folder it was planned in).
        package var workingDirectory: String
        /// When it started: its frozen clock.
        package var startedAt: Date
        /// The scenarios left to settle, with their expected milliseconds (`nil`: never seen).
        package var expected: [String: Int64?]
        /// The plan just stored (`nil` when resumed): the queue takes the scenarios' definitions from it.
        package var plan: RunPlan?
        /// Its suite (`runs.project`).
        package var project: String
        /// Which failures its retries are for, as the run was planned (`nil`: this process's own setting).
        package var retryWhen: RetryWhen? = nil
    }

    /// The run `scenarios` make on this host, not yet stored: secrets out of their environments, the project and the
    /// git facts in.
    package static func plan(
        _ scenarios: [Scenario], settings: RunSettings, git: (revision: String?, branch: String?)
    ) -> RunPlan {
        var plan = RunPlan(
            host: HostFacts.hostName, gitRevision: git.revision, workingDirectory: settings.directory,
            configPath: settings.configPath,
            mode: settings.mode.value, workers: settings.workers.value, retries: settings.retries.value,
            scenarios: scenarios.map { $0.withSecretsRedacted(settings.redact.isSecret) }
        )
        plan.project = settings.project
        plan.branch = git.branch
        plan.retryWhen = settings.retryWhen.value
        plan.failFast = settings.failFast
        return plan
    }

    /// What a batch's ids may take of its command, in bytes (a tenth under Linux's limit on one argument).
    static let commandBytes = 115_000

    /// `scenarios` with their batches sized from what their runner costs (`suite.batch: auto`, ``BatchSizing``): the
    /// tests' expected times and each batch command's cost per process on this host, from history. Each choice and its
    /// reason are logged (`--verbose`). With them, the expected times read (``RunPlan/expected``).
    func sizeBatches(
        _ scenarios: [Scenario], settings: RunSettings, logger: Logger
    ) async throws -> (scenarios: [Scenario], expected: [String: Int64?]) {
        let batched = scenarios.filter { $0.batch != nil }
        let commands = Array(Set(batched.compactMap { $0.batch?.command })).sorted()
        guard !commands.isEmpty else { return (scenarios, [:]) }
        // The two reads go side by side.
        async let expectedRead = runs.expectedDurations(batched.map(\.id), project: settings.project)
        async let costsRead = runs.runnerCosts(of: commands, project: settings.project, host: HostFacts.hostName)
        let (expected, costs) = try await (expectedRead, costsRead)
        let sizing = BatchSizing(slots: settings.workers.value, cores: ProcessInfo.processInfo.activeProcessorCount)
        var chosen: [String: Batch] = [:]
        for command in commands {
            let tests = batched.filter { $0.batch?.command == command }
            guard var bounds = tests.first?.batch else { continue }
            bounds.size = min(bounds.size, bounds.largestSize(of: tests.map(\.id), bytes: Self.commandBytes))
            let choice = sizing.choose(
                bounds, tests: tests.map { expected[$0.id] },
                cost: costs[command]
                    ?? bounds.listedMilliseconds.map {
                        RunnerCost.listing($0, concurrency: bounds.parallel == true ? Double(sizing.cores) : nil)
                    },
                share: Double(tests.count) / Double(batched.count))
            chosen[command] = choice.batch
            logger.info(
                "batches sized", metadata: ["batch.command": "\(command)", "batch.choice": "\(choice.reason)"])
        }
        let sized = scenarios.map { scenario in
            var sized = scenario
            if let command = scenario.batch?.command { sized.batch = chosen[command] ?? scenario.batch }
            return sized
        }
        // What was read is what the run's rows take (``RunPlan/expected``).
        return (sized, Dictionary(batched.map { ($0.id, expected[$0.id]) }, uniquingKeysWith: { first, _ in first }))
    }

    /// Stores `plan` unless a run under its join key exists already (`nil`: another node planned it first).
    package func store(_ plan: RunPlan) async throws -> Planned? {
        guard let (startedAt, expected) = try await runs.createUnlessJoined(plan) else { return nil }
        return Planned(
            runID: plan.id, workingDirectory: plan.workingDirectory, startedAt: startedAt, expected: expected,
            plan: plan, project: plan.project, retryWhen: plan.retryWhen)
    }

    /// Stores `plan`, which has no join key.
    package func store(_ plan: RunPlan) async throws -> Planned {
        let (startedAt, expected) = try await runs.create(plan)
        return Planned(
            runID: plan.id, workingDirectory: plan.workingDirectory, startedAt: startedAt, expected: expected,
            plan: plan, project: plan.project, retryWhen: plan.retryWhen)
    }

    /// Takes up run `runID` again: what passed does not run again. An unknown id is a ``UsageError``.
    package func resume(_ runID: UUID, database: String) async throws -> Planned {
        let id = runID.uuidString.lowercased()
        guard let summary = try await runs.summary(runID) else {
            throw UsageError(.notFound, "no run \(id) in \(database) (see orchestrate runs)")
        }
        try await runs.setState(runID, .running)
        output.note("resuming run \(id): \(summary.pending) scenario(s) left")
        guard let left = try await runs.unsettled(runID) else {
            throw StoreError(.unknownRun, "run \(id) vanished from \(database)")
        }
        return Planned(
            runID: runID, workingDirectory: summary.workingDirectory, startedAt: left.startedAt,
            expected: left.expected, project: summary.project)
    }
}
