import Analysis
import Coordinator
import Foundation
import Logging
import MockServer
import OrchestrateModel
import Store
import Synchronization
import UnixSignals

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How this process takes part in a run: it plans one, resumes one, or joins one that CI nodes and agents share
/// through the database (docs/ARCHITECTURE.md, "Many hosts"); then works it on its slots until the whole run is
/// settled, judges it if it settled last (exactly one process does), and writes the reports.
struct RunWork {
    let settings: RunSettings
    let database: Database
    let output: any RunOutput
    let logger: Logger
    /// Served at `--metrics-port`, when asked for.
    let metrics: RunMetrics?
    /// This process: the lease owner of what its slots run, and its membership of the run.
    let member = ProcessIdentity(host: HostFacts.hostName, pid: getpid())

    var runs: RunStore { RunStore(database: database) }
    /// The name this process's share of a joined run is kept under.
    var node: String { settings.node.value }
    var workers: Int { settings.workers.value }

    /// What arriving at a run led to.
    enum Arrival {
        /// Slots to work: `joined` when other processes may work the run too.
        case work(RunPlanner.Planned, joined: Bool)
        /// Nothing to do here: the run was settled before; exit with this code.
        case settled(Int32)
    }

    /// `git`: the revision and branch a new run is recorded with, asked while the scenarios are listed.
    func arrive(git: Task<(revision: String?, branch: String?), Never>?) async throws -> Arrival {
        let planner = RunPlanner(runs: runs, output: output)
        let key: String
        switch settings.role {
        case .resume(let id):
            return .work(try await planner.resume(id, database: database.endpoint.description), joined: false)
        case .attach(let id):
            guard let run = try await runs.joinable(id) else {
                throw UsageError(
                    .notFound, "no run \(id.uuidString.lowercased()) in \(database.endpoint) (see orchestrate runs)")
            }
            return try await attach(run, label: "run \(id.uuidString.lowercased())")
        case .serve:
            return .settled(try await serveForever())
        case .plan:
            let planned: RunPlanner.Planned = try await planner.store(try await plan(git: git))
            return .work(planned, joined: false)
        case .join(let joinKey, agent: true):
            return try await attach(try await waitForPlan(joinKey), label: "the run under \(joinKey)")
        case .join(let joinKey, agent: false):
            key = joinKey
        }
        var plan = try await plan(git: git)
        plan.joinKey = key
        if let planned: RunPlanner.Planned = try await planner.store(plan) {
            output.note(
                "planned run \(plan.id.uuidString.lowercased()) under \(key) as node \(node); other nodes join it with --join \(key)"
            )
            return .work(planned, joined: true)
        }
        guard let run = try await runs.run(joinKey: key) else {
            throw StoreError(.unknownRun, "the run under \(key) vanished")
        }
        if run.state == .finished, settings.node.source == .flag("--node") {
            return try await rerun(run, key: key, git: git)
        }
        return try await attach(run, label: "the run under \(key)")
    }

    /// The run the selected scenarios make, not yet stored.
    private func plan(
        git: Task<(revision: String?, branch: String?), Never>?, only ids: Set<String>? = nil
    ) async throws -> RunPlan {
        var scenarios = try settings.selection.select(from: await settings.scenarios(), configPath: settings.configPath)
        if let ids { scenarios = scenarios.filter { ids.contains($0.id) } }
        // A node's re-run takes its share as it was: no selection cuts it again.
        var chosen: ChangeSelection.Chosen?
        let changes = ChangeSelection(settings: settings, runs: runs, logger: logger)
        if ids == nil, let change = settings.change {
            let selection = try await changes.choose(scenarios, change: change)
            output.note(selection.note)
            scenarios = selection.scenarios
            chosen = selection
        }
        var first: Set<String> = []
        if settings.order == .likelyFailing, !scenarios.isEmpty {
            // A selection decided it already: the same decision, not the same reads and diffs again.
            let likely =
                if let chosen {
                    ChangeSelection.likely(in: chosen.decision, of: scenarios.count)
                } else {
                    try await changes.likelyFailing(scenarios, change: settings.change)
                }
            output.note(likely.note)
            first = likely.ids
        }
        var expected: [String: Int64?] = [:]
        if settings.sizesBatches {
            (scenarios, expected) = try await RunPlanner(runs: runs, output: output).sizeBatches(
                scenarios, settings: settings, logger: logger)
        }
        var plan = RunPlanner.plan(scenarios, settings: settings, git: await git?.value ?? (nil, nil))
        plan.first = first
        plan.expected = expected
        if let chosen {
            plan.selection = chosen.description
            plan.skips = chosen.skips
            plan.sampled = chosen.sampled
        }
        return plan
    }

    /// Works a run planned elsewhere: running (or interrupted, taken up again), or settled already (said, with its
    /// code).
    private func attach(_ run: JoinableRun, label: String) async throws -> Arrival {
        let id = run.id.uuidString.lowercased()
        if run.state == .finished {
            let code = try await exitCode(of: run)
            output.note("\(label) (\(id)) is finished already; its exit code is \(code) (orchestrate report \(id))")
            return .settled(code)
        }
        if run.state == .interrupted { try await runs.setState(run.id, .running) }
        guard let left = try await runs.unsettled(run.id) else { throw StoreError(.unknownRun, "run \(id) vanished") }
        output.note("joined \(label) (\(id)) as node \(node) with \(workers) slot(s)")
        return .work(
            RunPlanner.Planned(
                runID: run.id, workingDirectory: settings.directory, startedAt: run.startedAt, expected: left.expected,
                project: run.project, retryWhen: run.retryWhen ?? .any),
            joined: true)
    }

    /// A node that joins its run again after the run finished (its CI job was re-run): it re-runs exactly the scenarios
    /// it ran there, or those of them that failed, as a run of its own — never an arbitrary new share.
    private func rerun(
        _ run: JoinableRun, key: String, git: Task<(revision: String?, branch: String?), Never>?
    ) async throws -> Arrival {
        let id = run.id.uuidString.lowercased()
        guard let share = try await runs.share(of: node, in: run.id, failedOnly: settings.failedOnly) else {
            let code = try await exitCode(of: run)
            output.note(
                "the run under \(key) (\(id)) is finished and node \(node) ran nothing in it; its exit code is \(code)")
            return .settled(code)
        }
        guard !share.scenarioIDs.isEmpty else {
            let what = settings.failedOnly ? "had no failures" : "finished nothing"
            output.note(
                "node \(node) \(what) in its last run of \(key) (\(share.runID.uuidString.lowercased())): nothing to re-run"
            )
            return .settled(ExitStatus.passed)
        }
        var plan = try await plan(git: git, only: Set(share.scenarioIDs))
        let gone = Set(share.scenarioIDs).subtracting(plan.scenarios.map(\.id))
        if !gone.isEmpty { output.note("no longer in the suite, not re-run: \(gone.sorted().joined(separator: ", "))") }
        plan.parentRunID = run.id
        plan.node = node
        plan.project = run.project
        let planned: RunPlanner.Planned = try await RunPlanner(runs: runs, output: output).store(plan)
        output.note(
            "re-running node \(node)'s share of the run under \(key): \(plan.scenarios.count) scenario(s)"
                + (settings.failedOnly ? " that failed" : "") + " as run \(plan.id.uuidString.lowercased())")
        return .work(planned, joined: false)
    }

    /// An agent waits for the node that plans the run under `key`, up to ``RunSettings/planWait``.
    private func waitForPlan(_ key: String) async throws -> JoinableRun {
        let clock = ContinuousClock()
        let deadline = clock.now + settings.planWait
        var said = false
        while true {
            if let run = try await runs.run(joinKey: key) { return run }
            if clock.now >= deadline {
                throw JoinError(
                    .notPlanned,
                    "no run was planned under \(key) within \(settings.planWait.components.seconds) s (orchestrate run --join \(key) plans it)"
                )
            }
            if !said {
                output.note("waiting for a node to plan the run under \(key) (orchestrate run --join \(key))")
                said = true
            }
            try await Task.sleep(for: .milliseconds(500))
        }
    }

    /// The code a settled run exits with: the one its judge recorded (runs judged before there was one: failed or not).
    private func exitCode(of run: JoinableRun) async throws -> Int32 {
        if let code = run.exitCode { return code }
        let summary = try await runs.summary(run.id)
        return (summary?.failed ?? 0) > 0 ? ExitStatus.scenarioFailed : ExitStatus.passed
    }

    /// Works the run on this host's slots until the whole run is settled (or a signal stops this process), then judges
    /// it — if this process is the first to find it settled — or waits for its judge, and writes the reports.
    func work(_ planned: RunPlanner.Planned, joined: Bool) async throws -> Int32 {
        let pending = PendingResults(projectDirectory: settings.directory, runID: planned.runID)
        StopGuard.working(on: planned.runID, joined: joined)
        defer { StopGuard.working(on: nil, joined: joined) }
        do {
            return try await work(planned, joined: joined, pending: pending)
        } catch let error as CancellationError {
            throw error
        } catch {
            throw RunError.leftUnfinished(
                planned.runID, joined: joined, cause: error, kept: pending.kept, lost: pending.lost)
        }
    }

    private func work(_ planned: RunPlanner.Planned, joined: Bool, pending: PendingResults) async throws -> Int32 {
        try await runs.join(planned.runID, member: member.description, host: member.host, node: node, workers: workers)
        // The report's trends before this run are read while it works; its own attempts are added from its report.
        let earlierTrends = Task { [runs] in try await runs.earlierTrends(planned.runID) }
        defer { earlierTrends.cancel() }
        let execution = RunExecution(
            settings: settings, planned: planned, database: database, output: output, logger: logger,
            showsHosts: joined, metrics: metrics,
            pending: pending)
        var interrupted = try await execution.execute() == .interrupted
        if !interrupted, !joined, let share = settings.newTestsShare {
            // New tests run again, on the same slots, before the run is judged.
            let probes = try await runs.queueNewTestProbes(planned.runID, maximumShare: share)
            output.note(Self.describe(probes, share: share))
            if probes.probes > 0 { interrupted = try await execution.execute() == .interrupted }
        }
        // Stopped for failing fast (here or on another host), not by a signal: what is queued is not run, and the run
        // is judged with it as not run. (A signal's stop asks the database nothing more: it may be what failed.)
        let stopped = interrupted ? execution.failedFast.reason.withLock { $0 } : nil
        if stopped != nil {
            try await runs.dropQueued(planned.runID)
            interrupted = false
        }
        var diff = NetworkDiff()
        // Fields `mock.ignore.json` names are no drift evidence either.
        diff.ignores = { [ignored = settings.mockServer.ignoredJSON] path in ignored.contains { $0.names(path) } }
        let judge = RunJudge(runs: runs, cassette: MockSessions.cassettes(in: settings.recordings), diff: diff)
        if interrupted {
            // A node that leaves a joined run leaves it to the others; a run of its own waits for --resume. Not judged:
            // its passes keep the verdict they settled with, the rest have none. A database that does not answer does
            // not turn the stop into another kind of end: the run is left as it is, for --resume.
            do {
                // Marking the run and reading its report take a moment when the database answers; when it does not,
                // the stop ends here rather than after the connect timeout (a database crashing over and over, on a
                // full disk, takes connections and never answers them).
                if !joined {
                    try await abandoning(after: Coordinator.stoppingPatience) { [runs] in
                        try await runs.setState(planned.runID, .interrupted)
                    }
                }
                try await abandoning(after: Coordinator.stoppingPatience * 2) { [self] in
                    try await publish(
                        try await judge.unjudged(planned.runID).report, joined: joined, execution: execution,
                        trends: earlierTrends)
                }
            } catch {
                throw RunError.interruptedUnrecorded(cause: error)
            }
            return ExitStatus.interrupted
        }
        let clock = ContinuousClock()
        let giveUp = clock.now + .seconds(600)
        while true {
            if try await runs.claimJudgement(planned.runID, by: member.description) {
                // A run with no failed attempt has no incident, whose attempts the flakiness rollup leaves out: its
                // days are counted while it is judged. Any other run's are counted once its incidents are stored, so
                // that no reader of the scores (another run's quarantine, `flaky`) sees an outage's failures meanwhile.
                let rolledUp = Task { [runs] in
                    guard try await !runs.hasFailedAttempts(planned.runID) else { return false }
                    try await runs.rollUp(planned.runID)
                    return true
                }
                let judgement: RunJudge.Judgement
                do {
                    judgement = try await judge.judge(planned.runID, planned: planned.plan?.scenarios)
                } catch {
                    rolledUp.cancel()
                    throw error
                }
                // Verdicts and failure signatures, the incidents (then the days of a run with failures) and the
                // quarantine changes they lead to are stored while the reports are written; the exit code last, when the
                // other nodes may read the judged run.
                async let saved: Void = { [runs] in
                    if !judgement.changed.isEmpty { try await runs.saveVerdicts(planned.runID, judgement.changed) }
                    try await runs.saveSignatures(judgement.signatures, endpoints: judgement.failingEndpoints)
                }()
                // What each test touched, for the selections of later runs (at a clean revision only). Not recorded is
                // said, and the run's result stands: the next selection runs what has no footprint.
                async let footprints: Void = { [runs, settings, logger] in
                    guard settings.role.plans else { return }
                    do {
                        try await ChangeSelection.record(judgement.report, settings: settings, runs: runs)
                        try await runs.dropCoverage(planned.runID)
                    } catch {
                        logger.warning(
                            "footprints not recorded", metadata: ["error": "\(ExitStatus.describe(error))"])
                    }
                }()
                async let quarantined: Void = { [runs, settings, output] in
                    let counted = try await rolledUp.value
                    try await runs.saveIncidents(
                        planned.runID, judgement.report.incidents, explained: judgement.explained)
                    if !counted || !judgement.report.incidents.isEmpty { try await runs.rollUp(planned.runID) }
                    try await QuarantineUpdate.apply(
                        after: judgement, settings.quarantine, project: planned.project, runs: runs, output: output)
                }()
                try await publish(
                    judgement.report, joined: joined, execution: execution, trends: earlierTrends, judged: true)
                try await saved
                try await quarantined
                await footprints
                let code = ExitStatus.code(for: judgement.report, strict: settings.strict)
                try await runs.recordExitCode(planned.runID, code)
                return code
            }
            if let run = try await runs.joinable(planned.runID), let code = run.exitCode {
                try await publish(
                    try await judge.unjudged(planned.runID).report, joined: joined, execution: execution,
                    trends: earlierTrends
                )
                return code
            }
            if clock.now >= giveUp {
                throw JoinError(.notJudged, "run \(planned.runID.uuidString.lowercased()) was not judged within 600 s")
            }
            if stopped != nil {
                // No host of a stopped run works its queue any more: leases of hosts lost in the stop are taken back
                // here, and what they gave back is not run.
                _ = try await AttemptQueue(database: database, lease: settings.lease.value).reapExpired(
                    runID: planned.runID)
                try await runs.dropQueued(planned.runID)
            }
            try await Task.sleep(for: .milliseconds(250))
        }
    }

    /// How long the report waits, after the run, for the trends read while it worked.
    static let trendsPatience: Duration = .seconds(30)

    /// What `--detect-new-flakes` did, in a line.
    static func describe(_ probes: NewTestProbes, share: Double) -> String {
        if probes.skipped {
            return
                "new tests: \(probes.newTests) of \(probes.tests), more than \(Int((share * 100).rounded()))% of the suite "
                + "(--new-tests-share): not run again"
        }
        return
            "new tests: \(probes.newTests) of \(probes.tests); \(probes.probes) extra run\(probes.probes == 1 ? "" : "s") of those that passed"
    }

    /// The run's report files under the reports folder (and `--junit`), then its summary with a line per host; the
    /// Markdown summary where `--summary` asks; and, by the process that `judged` the run, GitHub's annotations and job
    /// summary when they are on.
    private func publish(
        _ report: RunReport, joined: Bool, execution: RunExecution, trends: Task<[String: [TrendPoint]], any Error>,
        judged: Bool = false
    ) async throws {
        let directory = settings.reports.value + "/" + report.runID.uuidString.lowercased()
        // The read made while the run worked, unless it failed or never answered (the database was away then): then
        // read again.
        let earlier: [String: [TrendPoint]]
        if let read = try? await abandoning(after: Self.trendsPatience, { try await trends.value }) {
            earlier = read
        } else {
            trends.cancel()
            earlier = try await runs.earlierTrends(report.runID)
        }
        // Each host's share, for the summary, is read while the files are written.
        async let hostsRead = runs.hostShares(report.runID)
        let trends = TrendPoint.trends(earlier: earlier, adding: report)
        let files = try await RunReportFiles(runs: runs, directory: directory).write(
            report, extraJUnit: junit(report, joined: joined, judged: judged), trends: trends)
        let hosts = try await hostsRead
        let text = RunSummaryText.render(
            report, attemptsDirectory: execution.attemptsDirectory, files: files, hosts: hosts)
        let github = settings.annotations.value
        if github {
            // The run's own workflow commands (commands are stopped since the run began: see RunOrchestration), then
            // the summary with commands stopped again under a new token, then commands back for the rest of the step.
            let token = UUID().uuidString.lowercased()
            var lines = ["::\(settings.commandsToken)::"]
            if judged { lines += GitHubAnnotations.commands(for: report, strict: settings.strict) }
            lines += ["::stop-commands::\(token)", text, "::\(token)::"]
            output.summary(lines.joined(separator: "\n"))
        } else {
            output.summary(text)
        }
        let stepSummary = github && judged ? settings.stepSummary : nil
        guard stepSummary != nil || settings.summary != nil else { return }
        let markdown = MarkdownSummary.render(
            report, hosts: hosts, earlier: earlier, report: files.html, runURL: github ? settings.workflowRunURL : nil)
        if let path = stepSummary {
            // The job summary GitHub reads may hold other steps' summaries: appended, in one write. A summary that
            // cannot be written is said, and the run's result stands.
            do {
                try AtomicFile.append(markdown, to: path, creating: true)
            } catch {
                output.note("cannot append the job summary to \(path): \(error.localizedDescription)")
            }
        }
        if let path = settings.summary { writeSummary(markdown, to: path) }
    }

    /// `--summary`: the run in Markdown (temporary file, then rename); a summary that cannot be written is said.
    private func writeSummary(_ markdown: String, to path: String) {
        do {
            try AtomicFile.write(markdown, to: path)
        } catch {
            output.note("cannot write the Markdown summary to \(path): \(error.localizedDescription)")
        }
    }

    /// `--junit`: in a joined run, the scenarios this process settled (their last attempt ran here), and — by the
    /// process that `judged` it — those no process ran (left out by a selection, or not run when the run stopped
    /// early), so that the files of every node, merged as CI systems merge JUnit, hold each scenario exactly once;
    /// otherwise the whole run.
    private func junit(_ report: RunReport, joined: Bool, judged: Bool) -> (path: String, report: RunReport)? {
        guard let extraJUnit = settings.junit else { return nil }
        guard joined else { return (extraJUnit, report) }
        let prefix = member.description + "/"
        var own = report
        own.scenarios = report.scenarios.filter {
            $0.attempts.last?.worker.map { $0.hasPrefix(prefix) } ?? judged
        }
        if !judged { own.skipped = [] }
        return (extraJUnit, own)
    }

    /// An agent that serves run after run of this project until SIGTERM or SIGINT stops it (130): a run it is working
    /// is left to the others, its attempts back in the queue.
    func serveForever() async throws -> Int32 {
        output.note(
            "agent \(member) serves the runs of project \(settings.project) with \(workers) slot(s); SIGTERM or Ctrl-C stops it"
        )
        // Between runs no run's signal handling is in place: the agent's own, for its whole life.
        let signals = await UnixSignalsSequence(trapping: .sigterm, .sigint)
        return try await withThrowingTaskGroup(of: Int32.self) { group in
            group.addTask {
                for await _ in signals { return ExitStatus.interrupted }
                return ExitStatus.interrupted
            }
            group.addTask {
                while true {
                    guard let id = try await runs.nextRunWithWork(project: settings.project),
                        let run = try await runs.joinable(id)
                    else {
                        try await Task.sleep(for: .seconds(1))
                        continue
                    }
                    guard case .work(let planned, _) = try await attach(run, label: "run \(id.uuidString.lowercased())")
                    else { continue }
                    if try await work(planned, joined: true) == ExitStatus.interrupted { return ExitStatus.interrupted }
                }
            }
            defer { group.cancelAll() }
            do {
                return try await group.next() ?? ExitStatus.interrupted
            } catch is CancellationError {
                return ExitStatus.interrupted
            }
        }
    }
}

/// A run that could not be joined or judged in time (exit 3).
struct JoinError: CodedError {
    typealias Code = ErrorCode<JoinError>

    let code: Code
    let message: String

    init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}

extension ErrorCode where Domain == JoinError {
    /// No node planned the run under an agent's join key within its wait.
    static let notPlanned = Self("notPlanned")
    /// The run was settled but nobody judged it within the wait.
    static let notJudged = Self("notJudged")
}
