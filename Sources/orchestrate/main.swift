import ArgumentParser
import CHeap
import Foundation
import Logging
import OrchestrateModel
import Orchestrator

@main
struct Orchestrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "orchestrate",
        abstract: "Runs UI and end-to-end scenarios fast and tells genuine failures from flaky ones.",
        discussion: """
            Scenarios are sharded over worker slots, longest expected first; every attempt runs as a real process \
            in its own process group with the env contract (ORCHESTRATE_MOCK_URL, ORCHESTRATE_RUN_ID, …), and every \
            attempt's outcome lands in PostgreSQL (by default a private cluster under .orchestrate/postgres).

            Exit codes: 0 all passed (flaky passes are reported), 1 a scenario failed, 2 bad usage or config, \
            3 infrastructure (a backend's outage was the only failure, database unreachable, no free port), \
            130 interrupted (resume with --resume RUN_ID).
            """,
        subcommands: [
            Init.self, Run.self, Agent.self, Report.self, Artifacts.self, Scenarios.self, Runs.self, History.self,
            Flaky.self, Failures.self, Suggest.self,
            Logs.self, QuarantineCommand.self,
            Mock.self,
            GherkinGroup.self,
            DB.self,
        ]
    )

    /// As ArgumentParser's, except that bad usage exits 2 (docs/ARCHITECTURE.md), not 64.
    static func main() async {
        // A burst of large bodies is given back to the system once the mock server lets it go.
        orchestrate_map_large_blocks(1 << 20)
        // A closed pipe is a failed write (given up on: Console), never a signal that ends the command mid-work.
        signal(SIGPIPE, SIG_IGN)
        do {
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
            // Every command has finished its work (its files written, its database pool closed) when it returns: what
            // is left is output on its way out. Tearing down the runtime's and libraries' state would only delay the
            // exit.
            StandardStreams.flush(within: .seconds(10))
            fflush(nil)
            _exit(0)
        } catch {
            StandardStreams.flush(within: .seconds(10))
            let code = exitCode(for: error)
            if code == .validationFailure {
                // One line: what is wrong, and where the help is.
                Console.standard.note("error: \(message(for: error)) (orchestrate help)")
                Foundation.exit(ExitStatus.badInput)
            }
            exit(withError: error)
        }
    }
}

/// Options every command shares.
struct CommonOptions: ParsableArguments {
    @Option(
        name: .long,
        help:
            "The config file; commands run in its folder. (default: orchestrate.yml here, else in the nearest folder above)"
    )
    var config: String?

    /// `--config`, else the orchestrate.yml found here or above.
    func configPath() throws -> String { try ConfigLoader.locate(config) }

    @Option(
        name: .long,
        help:
            "postgres://user@host/db (default: ORCHESTRATE_DATABASE_URL, orchestrate.yml, PG* variables, else the embedded cluster)."
    )
    var database: String?

    @Flag(name: .long, help: "Log what orchestrate does (to stderr).")
    var verbose = false

    var logger: Logger {
        var logger = Logger(label: "orchestrate") { ConsoleLogHandler(label: $0) }
        logger.logLevel = verbose ? .debug : .warning
        return logger
    }
}

/// Prints what a command body returns (exit 0), or turns its error into one line on stderr and an exit code.
func printing(_ body: () async throws -> String) async throws {
    try await exiting {
        Console.standard.line(try await body())
        return 0
    }
}

/// Runs a command body, turning errors into one line on stderr and the exit codes of docs/ARCHITECTURE.md.
func exiting(_ body: () async throws -> Int32) async throws {
    let code: Int32
    do {
        code = try await body()
    } catch let error as ValidationError {
        throw error
    } catch {
        Console.detached.note("error: \(ExitStatus.describe(error))")
        code = ExitStatus.code(for: error)
    }
    if code != 0 { throw ExitCode(code) }
}

extension Mode: ExpressibleByArgument {}
extension RetryWhen: ExpressibleByArgument {}
extension OutputFormat: ExpressibleByArgument {}
extension FlakinessCommands.FlakyGrouping: ExpressibleByArgument {}
extension RunOptions.ProgressChoice: ExpressibleByArgument {}
extension RunOptions.AnnotationsChoice: ExpressibleByArgument {}
extension RunOptions.RunOrder: ExpressibleByArgument {}
extension DatabaseCommands.Action: ExpressibleByArgument {}
extension FlakinessCommands.QuarantineAction: ExpressibleByArgument {}

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the suite's scenarios over worker slots and record every attempt.",
        discussion: """
            Ctrl-C or SIGTERM stops launching, ends the running scenarios' process groups and marks the run \
            interrupted; `orchestrate run --resume RUN_ID` finishes what is left without re-running what passed.
            """
    )

    @OptionGroup var common: CommonOptions

    @OptionGroup var work: WorkOptions

    @Option(
        name: .long,
        help: """
            replay | record | live | mock | hybrid | compare (default: orchestrate.yml's mock.mode, else replay; a scenario's mode tag \
            wins). compare runs every scenario in replay and live and judges it: stable, failing, drift, stale-recording, \
            nondeterministic.
            """)
    var mode: Mode?

    @Option(
        name: .long, parsing: .unconditional,
        help: "Re-runs of a failed attempt, 0 to 100 (default: orchestrate.yml's retries, else 0).")
    var retries: Int?

    @Option(
        name: .long,
        help: """
            Which failures are retried: any, or evidence (only a crash, a timeout, or at the failing step an upstream's \
            5xx, 429, transport error or slow answer) (default: orchestrate.yml's retries.when, else any).
            """)
    var retryWhen: RetryWhen?

    @Option(
        name: .long, parsing: .upToNextOption,
        help: "Run only these scenarios: ids, or feature files with optional lines (Features/chat.feature:12:30).")
    var only: [String] = []

    @Option(
        name: .long,
        help: "Run only scenarios whose tags match a Cucumber tag expression, e.g. \"@smoke and not (@wip or @slow)\".")
    var tags: String?

    @Option(name: .long, help: "Finish an interrupted run: only what has not passed runs again.")
    var resume: String?

    @OptionGroup var joining: JoinOptions

    @Flag(
        name: .long,
        help:
            "With --join and --node, when the run is finished: re-run only what failed in this node's share (a CI job re-run)."
    )
    var failed = false

    @Flag(
        name: .long,
        help: """
            Run every new test (never run before in this project with the same command) extra times once it passed: 10 runs \
            in all under 5 s, 5 under 10 s, 3 under 30 s, 2 under 5 min. A single failure makes it nondeterministic. \
            Skipped when more of the suite is new than --new-tests-share.
            """)
    var detectNewFlakes = false

    @Option(name: .long, help: "With --detect-new-flakes: the largest share of the suite that may be new, 0 to 1.")
    var newTestsShare: Double = 0.3

    @Option(
        name: .long,
        help: ArgumentHelp(
            """
            Run only the tests a change since REV (a commit, branch or tag; uncommitted changes too) can break: \
            those whose footprint (own files, feature file, cassette, endpoints called; recorded by runs at a clean \
            revision) it touches, new tests, tests one of whose last 3 attempts did not pass, and tests with no \
            footprint REV reaches. The rest are skipped with their reason (docs/selection.md).
            """, valueName: "rev"))
    var changedSince: String?

    @Option(
        name: .long, parsing: .upToNextOption,
        help: ArgumentHelp(
            "As --changed-since, for a change to these files (paths from here).", valueName: "file"))
    var changed: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            """
            With --changed-since or --changed: also run this share (0 to 1) of the tests left out, chosen at random; \
            their failures are counted as the selection's misses.
            """, valueName: "share"))
    var sample: Double = 0

    @Option(
        name: .long,
        help: """
            Which tests the slots take first: makespan (the longest expected first: the run ends soonest) or \
            likely-failing (new tests, tests one of whose last 3 attempts did not pass and tests whose footprint the \
            change touches first, each group longest first: the first failures come soonest).
            """)
    var order: RunOptions.RunOrder = .makespan

    @Option(
        name: .long,
        help: ArgumentHelp(
            """
            Stop the run on every host that joined it after N tests failed for good (retries spent; not flaky, not \
            quarantined): the running attempts end, the rest is reported as not run, exit 1.
            """, valueName: "n"))
    var failFast: Int?

    func validate() throws {
        try joining.validate()
        try work.validate()
        if failed && (joining.join == nil || joining.node == nil) {
            throw ValidationError("--failed re-runs a node's failures: it needs --join KEY and --node NAME")
        }
        if joining.join != nil && resume != nil {
            throw ValidationError("--join plans or joins a run; it cannot be combined with --resume")
        }
        if let retries, !Limits.retries.contains(retries) {
            throw ValidationError(
                "--retries must be from \(Limits.retries.lowerBound) to \(Limits.retries.upperBound) (got \(retries))")
        }
        if let resume, UUID(uuidString: resume) == nil {
            throw ValidationError("--resume needs a run id like 6f1c2a9e-… (see orchestrate runs)")
        }
        if !(0...1).contains(newTestsShare) {
            throw ValidationError("--new-tests-share must be from 0 to 1 (got \(newTestsShare))")
        }
        if changedSince != nil && !changed.isEmpty {
            throw ValidationError("--changed-since and --changed are two ways to say what changed: give one")
        }
        if !(0...1).contains(sample) || sample.isNaN {
            throw ValidationError("--sample must be a share from 0 to 1 (got \(sample))")
        }
        if sample > 0 && changedSince == nil && changed.isEmpty {
            throw ValidationError(
                "--sample runs a share of what a selection leaves out: it needs --changed-since or --changed")
        }
        if let failFast, !(1...1_000_000).contains(failFast) {
            throw ValidationError("--fail-fast stops after N failures: N must be from 1 to 1000000 (got \(failFast))")
        }
        if resume != nil && (order != .makespan || failFast != nil) {
            throw ValidationError(
                "--resume finishes a run as planned; its order and --fail-fast were chosen then")
        }
        if resume != nil && (changedSince != nil || !changed.isEmpty) {
            throw ValidationError("--resume finishes a run as planned; it cannot be combined with --changed-since")
        }
        if resume != nil && (!only.isEmpty || tags != nil) {
            throw ValidationError("--resume finishes a run as planned; it cannot be combined with --only or --tags")
        }
    }

    func run() async throws {
        var options = RunOptions()
        options.database = common.database
        work.apply(to: &options)
        options.mode = mode
        options.retries = retries
        options.retryWhen = retryWhen
        options.only = only
        options.tags = tags
        options.resume = resume.flatMap(UUID.init(uuidString:))
        options.joinKey = joining.join
        options.node = joining.node
        options.failedOnly = failed
        options.newTestsShare = detectNewFlakes ? newTestsShare : nil
        options.changedSince = changedSince
        options.changed = changed
        options.sample = sample
        options.order = order
        options.failFast = failFast
        let logger = common.logger
        StopGuard.arm()
        try await exiting {
            // The config found here or above, refused when it is another user's: said as every error is.
            options.configPath = try common.configPath()
            return try await RunOrchestration.run(
                options, output: ConsoleRunOutput(progress: work.progress, console: .detached), logger: logger)
        }
    }
}

/// How a process works a run on this host: `run` and `agent` alike.
struct WorkOptions: ParsableArguments {
    // `.unconditional`: `--workers -1` is a value (and an error saying so), not a missing one.
    @Option(
        name: .long, parsing: .unconditional,
        help: "Worker slots on this host (default: orchestrate.yml's workers, else the core count).")
    var workers: Int?

    @Option(name: .long, help: "Also write the JUnit XML here (in a joined run: the scenarios this process settled).")
    var junit: String?

    @Option(name: .long, help: "Reports folder (default: orchestrate.yml's reports, else .orchestrate/reports).")
    var reports: String?

    @Option(
        name: .long,
        help: """
            github: an ::error annotation per failing test at its file:line, ::warning for flaky and quarantined ones, \
            and the Markdown summary appended to $GITHUB_STEP_SUMMARY (default: github when GITHUB_ACTIONS=true) | none.
            """)
    var annotations: RunOptions.AnnotationsChoice?

    @Option(name: .long, help: "Also write the run's Markdown summary here (a GitLab or Buildkite annotation, say).")
    var summary: String?

    @Flag(
        name: .long, help: "Flaky passes, nondeterministic verdicts and quarantined failures fail the run too (exit 1)."
    )
    var strict = false

    @Option(name: .long, help: "Progress display: auto (live on a terminal, lines otherwise) | live | lines | none.")
    var progress: RunOptions.ProgressChoice = .automatic

    @Option(
        name: .long, parsing: .unconditional,
        help: """
            Serve Prometheus metrics at http://HOST:PORT/metrics while working (0: a free port, said on stderr): slots busy \
            and idle, attempts by outcome, queue depth, lease expiries and requeues, claim latency.
            """)
    var metricsPort: Int?

    @Option(
        name: .long,
        help: """
            The address --metrics-port listens on (default 127.0.0.1, this host only; 0.0.0.0 for a scraper elsewhere, \
            e.g. Prometheus in another pod).
            """)
    var metricsAddress = "127.0.0.1"

    @Option(
        name: .long,
        help: ArgumentHelp("Lease length, e.g. 30s: a worker silent this long is presumed dead.", visibility: .hidden))
    var lease: String?

    func validate() throws {
        if let workers, !Limits.workers.contains(workers) {
            throw ValidationError(
                "--workers must be from \(Limits.workers.lowerBound) to \(Limits.workers.upperBound) (got \(workers))")
        }
        if let metricsPort, !(0...65535).contains(metricsPort) {
            throw ValidationError("--metrics-port must be from 0 to 65535 (got \(metricsPort))")
        }
        if let lease, DurationText.parse(lease) == nil { throw ValidationError("--lease must be a duration like 30s") }
    }

    func apply(to options: inout RunOptions) {
        options.workers = workers
        options.junitPath = junit
        options.annotations = annotations
        options.summaryPath = summary
        options.reportsDirectory = reports
        options.strict = strict
        options.progress = progress
        options.metricsPort = metricsPort
        options.metricsAddress = metricsAddress
        options.lease = lease.flatMap(DurationText.parse)
    }
}

/// How a process joins a run that several hosts work.
struct JoinOptions: ParsableArguments {
    @Option(
        name: .long,
        help: """
            Join the run planned under KEY (the CI's pipeline id, say): the first node to arrive plans it, the others add \
            their slots. Every node exits when the whole run is settled, with the run's exit code.
            """)
    var join: String?

    @Option(
        name: .long,
        help: """
            This node's name in a joined run (default: the host name). A node that joins its finished run again under the \
            same name re-runs exactly the scenarios it ran there (with --failed, those that failed).
            """)
    var node: String?

    func validate() throws {
        for (flag, value) in [("--join", join), ("--node", node)] {
            guard let value else { continue }
            if value.isEmpty || value.count > 200
                || value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
            {
                throw ValidationError("\(flag) must be 1 to 200 characters without control characters")
            }
        }
    }
}

struct Agent: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Add this host's worker slots to a run planned elsewhere.",
        discussion: """
            An agent never plans: it works the run RUN_ID (--run), or the run planned under KEY (--join, waiting up to \
            --wait for a node to plan it), and exits when the whole run is settled, with the run's exit code; or it serves \
            run after run of this project (project: in orchestrate.yml) until SIGTERM or Ctrl-C (--forever). Scenario \
            commands run in the folder of --config, this host's checkout of the suite.
            """
    )

    @OptionGroup var common: CommonOptions

    @Option(name: .long, help: "The run to work (see orchestrate runs).")
    var run: String?

    @OptionGroup var joining: JoinOptions

    @Flag(name: .long, help: "Serve every run of this project that has work waiting, one after another, until stopped.")
    var forever = false

    @OptionGroup var work: WorkOptions

    @Option(name: .long, help: "How long --join waits for a node to plan the run, e.g. 10m.")
    var wait = "10m"

    func validate() throws {
        try joining.validate()
        try work.validate()
        if [run != nil, joining.join != nil, forever].filter({ $0 }).count != 1 {
            throw ValidationError("an agent needs exactly one of --run RUN_ID, --join KEY and --forever")
        }
        if let run, UUID(uuidString: run) == nil {
            throw ValidationError("--run needs a run id like 6f1c2a9e-… (see orchestrate runs)")
        }
        if DurationText.parse(wait) == nil { throw ValidationError("--wait must be a duration like 10m") }
    }

    func run() async throws {
        var options = RunOptions()
        options.database = common.database
        work.apply(to: &options)
        options.agent = true
        options.attach = run.flatMap(UUID.init(uuidString:))
        options.joinKey = joining.join
        options.node = joining.node
        options.forever = forever
        options.planWait = DurationText.parse(wait) ?? .seconds(600)
        let logger = common.logger
        StopGuard.arm()
        try await exiting {
            // The config found here or above, refused when it is another user's: said as every error is.
            options.configPath = try common.configPath()
            return try await RunOrchestration.run(
                options, output: ConsoleRunOutput(progress: work.progress, console: .detached), logger: logger)
        }
    }
}

struct Report: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a run's JUnit XML and HTML report from the database, on any host, and print its summary.",
        usage: "orchestrate report [<run>] [--join <key>] [--junit <path>] [<options>]",
        discussion:
            "Every attempt of a run that many hosts worked is in the database: any of them, or any other machine, can write them."
    )

    @OptionGroup var common: CommonOptions

    @Argument(help: "The run (see orchestrate runs).")
    var run: String?

    @Option(name: .long, help: "The run planned under this join key, instead of RUN.")
    var join: String?

    @Option(name: .long, help: "Write the whole run's JUnit XML here.")
    var junit: String?

    @Option(name: .long, help: "Write the whole run's HTML report here.")
    var html: String?

    func validate() throws {
        if (run == nil) == (join == nil) {
            throw ValidationError("name the run: RUN (see orchestrate runs) or --join KEY")
        }
        if let run, UUID(uuidString: run) == nil {
            throw ValidationError("RUN must be a run id like 6f1c2a9e-… (see orchestrate runs)")
        }
    }

    func run() async throws {
        let logger = common.logger
        try await printing {
            try await ReportCommand.write(
                run: run.map { .id(UUID(uuidString: $0)!) } ?? .joinKey(join ?? ""), junit: junit, html: html,
                configPath: try common.configPath(),
                database: common.database, logger: logger)
        }
    }
}

struct Artifacts: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write what a scenario's attempts kept (artifacts, logs of failures) from the database, on any host.",
        usage: "orchestrate artifacts <run> <scenario> --out <folder> [<options>]",
        discussion: """
            Each attempt's files go to a folder of their own under --out (attempt-1/, attempt-2/, …). What an attempt keeps \
            is stored up to artifacts.max-bytes in orchestrate.yml (10 MiB by default); files past it are listed by name.
            """
    )

    @OptionGroup var common: CommonOptions

    @Argument(help: "The run (see orchestrate runs).")
    var run: String

    @Argument(help: "The scenario's id.")
    var scenario: String

    @Option(name: .long, help: "The folder to write into.")
    var out: String

    @Option(name: .long, help: "Only this attempt (1, 2, …).")
    var attempt: Int?

    func validate() throws {
        if UUID(uuidString: run) == nil {
            throw ValidationError("RUN must be a run id like 6f1c2a9e-… (see orchestrate runs)")
        }
        if let attempt, attempt < 1 { throw ValidationError("--attempt must be 1 or more") }
    }

    func run() async throws {
        let logger = common.logger
        try await printing {
            try await ReportCommand.artifacts(
                runID: UUID(uuidString: run)!, scenario: scenario, attempt: attempt, out: out,
                configPath: try common.configPath(), database: common.database,
                logger: logger)
        }
    }
}

struct Init: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a first orchestrate.yml for the suite in this folder.",
        usage: "orchestrate init [--suite swiftpm|xcodebuild|pytest|gherkin|jest] [--config <file>]",
        discussion: """
            Looks at the folder for a Swift package (Package.swift), an Xcode project or workspace, a pytest suite (its \
            config, conftest.py or test_*.py), feature files (run by behave, cucumber-js or Cucumber when it finds \
            them), or jest (package.json); writes a commented orchestrate.yml for it; adds .orchestrate/ (the \
            database, reports and kept files) to .gitignore; and shows what would run. With several suites it asks on \
            a terminal, else writes the first and says so. It never overwrites a file. Listing runs the suite's own code, \
            as orchestrate scenarios does (pytest imports the test modules; a Swift package is built).
            """
    )

    @Option(name: .long, help: "The kind of suite to write, when the folder has several.")
    var suite: InitCommand.Kind?

    @Option(name: .long, help: "The file to write, in this folder.")
    var config = ConfigLoader.fileName

    @Flag(name: .long, help: "Log what orchestrate does (to stderr).")
    var verbose = false

    func validate() throws {
        if config.contains("/") || config.hasPrefix(".") || !config.hasSuffix(".yml") {
            throw ValidationError("--config is a file name in this folder ending in .yml (got \(config))")
        }
    }

    func run() async throws {
        var logger = Logger(label: "orchestrate") { ConsoleLogHandler(label: $0) }
        logger.logLevel = verbose ? .debug : .warning
        try await printing {
            try await InitCommand.run(
                directory: FileManager.default.currentDirectoryPath, configName: config, kind: suite,
                console: .standard, logger: logger)
        }
    }
}

extension InitCommand.Kind: ExpressibleByArgument {}

struct Scenarios: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List what would run, with expected durations from history.",
        usage: "orchestrate scenarios [--only <id> ...] [--tags <expression>] [<options>]")

    @OptionGroup var common: CommonOptions

    @Option(
        name: .long, parsing: .upToNextOption,
        help: "Only these scenarios: ids, or feature files with optional lines (Features/chat.feature:12).")
    var only: [String] = []

    @Option(
        name: .long, help: "Only scenarios whose tags match a Cucumber tag expression, e.g. \"@smoke and not @wip\".")
    var tags: String?

    @Option(name: .long, help: "table | json")
    var format: OutputFormat = .table

    func run() async throws {
        let logger = common.logger
        try await printing {
            try await ListingCommands.scenarios(
                configPath: try common.configPath(), only: only, tags: tags, database: common.database, format: format,
                logger: logger
            )
        }
    }
}

/// `--limit` and `--format` of the commands that list history.
struct ListingOptions: ParsableArguments {
    @Option(name: .long, parsing: .unconditional, help: "How many to list, newest first.")
    var limit = 20

    @Option(name: .long, help: "table | json")
    var format: OutputFormat = .table

    func validate() throws {
        if !(1...100_000).contains(limit) { throw ValidationError("--limit must be from 1 to 100000 (got \(limit))") }
    }
}

struct Runs: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List recent runs and their counts.",
        usage: "orchestrate runs [--limit <count>] [--format <format>] [<options>]")

    @OptionGroup var common: CommonOptions

    @OptionGroup var listing: ListingOptions

    func run() async throws {
        let logger = common.logger
        try await printing {
            try await ListingCommands.runs(
                configPath: try common.configPath(), limit: listing.limit, database: common.database,
                format: listing.format,
                logger: logger
            )
        }
    }
}

struct History: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "One scenario's attempts over time, and the steps of the newest with the exchanges each made.",
        usage: "orchestrate history <scenario> [--limit <count>] [<options>]",
        discussion: "SCENARIO is a scenario id, or a part of exactly one id that has history (\"bot offers\")."
    )

    @OptionGroup var common: CommonOptions

    @Argument(help: "The scenario id, or a part of one.")
    var scenario: String

    @OptionGroup var listing: ListingOptions

    func run() async throws {
        let logger = common.logger
        try await printing {
            try await ListingCommands.history(
                configPath: try common.configPath(), scenario: scenario, limit: listing.limit,
                database: common.database,
                format: listing.format, logger: logger
            )
        }
    }
}

struct Flaky: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Scenarios by flakiness score, with their verdicts and the newest evidence; or upstream endpoints.",
        usage: "orchestrate flaky [--since <duration>] [--by endpoint] [<options>]",
        discussion: """
            score = (flips + 1) / (transitions + 10): the share of consecutive attempts (same branch, git revision and \
            kind of backend: replay/mock or live/record) whose outcomes differ, with a prior worth ten observations that \
            starts every scenario at 0.1. One that alternates every run approaches 1; one that never changes approaches 0. \
            The scenarios are this project's (project: in orchestrate.yml, else the config's folder name). The attempts \
            are those of runs that have settled: a run under way counts once it is judged. --by endpoint ranks the \
            upstream endpoints (GET api.x.test/v1/carts/{id}) by the nondeterministic and drift verdicts attributed to \
            them (the exchange its failing lane's last failure met, else its first network difference), then by the \
            failed attempts whose failing step's exchange with them failed, over whole UTC days.
            """
    )

    @OptionGroup var common: CommonOptions

    @Option(name: .long, help: "The window: attempts finished in the last 14d, 36h, 90m…")
    var since = "14d"

    @Option(name: .long, help: "Only the runs of this branch (as recorded from the CI or git).")
    var branch: String?

    @Option(
        name: .long, help: "scenario (by flakiness score) | endpoint (upstream endpoints by the flakiness they explain)"
    )
    var by: FlakinessCommands.FlakyGrouping = .scenario

    @OptionGroup var listing: ListingOptions

    func run() async throws {
        let window = try sinceWindow(since)
        let logger = common.logger
        try await printing {
            try await FlakinessCommands.flaky(
                configPath: try common.configPath(), since: window, branch: branch, by: by, limit: listing.limit,
                database: common.database, format: listing.format,
                logger: logger
            )
        }
    }
}

struct Failures: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Failures grouped by cause across runs: tests affected, runs, first and last seen, an example.",
        usage: "orchestrate failures [--since <duration>] [--branch <branch>] [<options>]",
        discussion: """
            A failure's signature is its place (file:line), its message with the parts that change from one \
            occurrence to the next made alike (numbers, UUIDs, addresses, times, temporary paths, long hex), and the \
            exchange that failed at the failing step (POST api.x.test/v1/carts/{id} → 500). Failures with one cause \
            share it across tests and runs. Signatures hitting the most tests come first. The failures are those of \
            runs judged since the window began, in this project (project: in orchestrate.yml, else the config's \
            folder name).
            """
    )

    @OptionGroup var common: CommonOptions

    @Option(name: .long, help: "The window: failures in the last 14d, 36h, 90m…")
    var since = "14d"

    @Option(name: .long, help: "Only the runs of this branch (as recorded from the CI or git).")
    var branch: String?

    @OptionGroup var listing: ListingOptions

    func run() async throws {
        let window = try sinceWindow(since)
        let logger = common.logger
        try await printing {
            try await FlakinessCommands.failures(
                configPath: try common.configPath(), since: window, branch: branch, limit: listing.limit,
                database: common.database, format: listing.format, logger: logger)
        }
    }
}

/// `--since`: a window back from now (`14d`, `36h`, `90m`).
func sinceWindow(_ since: String) throws -> Duration {
    guard let window = DurationText.parse(since), window > .zero else {
        throw ValidationError("--since \(since): not a duration (e.g. 14d, 36h, 90m)")
    }
    return window
}

struct Suggest: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Changes to orchestrate.yml learned from history.",
        subcommands: [SuggestIgnores.self]
    )
}

struct SuggestIgnores: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ignores",
        abstract: "JSON fields that change by themselves (ids, times, tokens), as mock.ignore YAML.",
        usage: "orchestrate suggest ignores [--since <duration>] [--min <count>] [<options>]",
        discussion: """
            Compares the newest passing live attempts of each test (5 at most, 500 in all) with its recording: a JSON \
            path of a request or response body whose value differed from the recording in at least --min of them, \
            with two different values at least (a field that changed once and stays changed is the backend's change), \
            is printed as a mock.ignore.json entry with how often it changed and in which tests. Ignored, it no longer \
            keeps a replayed request from matching, nor counts as drift evidence. Paths ignored already are left out.
            """
    )

    @OptionGroup var common: CommonOptions

    @Option(name: .long, help: "The window: passing live attempts finished in the last 14d, 36h, 90m…")
    var since = "14d"

    @Option(name: .long, help: "How many passing live attempts a field must have changed in.")
    var min = 2

    func validate() throws {
        if !(1...1000).contains(min) { throw ValidationError("--min must be from 1 to 1000 (got \(min))") }
    }

    func run() async throws {
        let window = try sinceWindow(since)
        let logger = common.logger
        try await printing {
            try await FlakinessCommands.suggestIgnores(
                configPath: try common.configPath(), since: window, minimum: min, database: common.database,
                logger: logger)
        }
    }
}

struct Logs: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The network log of an attempt: its steps with the exchanges under each, or HAR 1.2 (--har).",
        usage: "orchestrate logs <run-id> <scenario> [--attempt <n>] [--har] [<options>]",
        discussion:
            "RUN is a run id or its start; SCENARIO an id or a part of exactly one. Default: the run's last attempt of it."
    )

    @OptionGroup var common: CommonOptions

    @Argument(help: "The run id, or its first characters.")
    var runID: String

    @Argument(help: "The scenario id, or a part of one.")
    var scenario: String

    @Option(name: .long, help: "The attempt number (1 is the first run, 2 the first retry…).")
    var attempt: Int?

    @Option(name: .long, help: "In a compare run: replay or live.")
    var lane: Mode?

    @Flag(name: .long, help: "Print the exchanges as HAR 1.2 JSON (any HAR viewer opens it).")
    var har = false

    func run() async throws {
        let logger = common.logger
        try await printing {
            try await FlakinessCommands.logs(
                configPath: try common.configPath(), run: runID, scenario: scenario, attempt: attempt, lane: lane,
                har: har,
                database: common.database,
                logger: logger
            )
        }
    }
}

struct QuarantineCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "quarantine",
        abstract: "Quarantined scenarios: their failures are reported but do not fail a run (unless run --strict).",
        usage: "orchestrate quarantine <action> [<scenario>] [<options>]",
        discussion: """
            add SCENARIO [--reason TEXT] [--until YYYY-MM-DD] [--owner NAME] | remove SCENARIO | list. A quarantined \
            scenario keeps running and its results keep counting in its flakiness score; an entry with --until holds \
            through that UTC day, and the first run judged after it takes the entry out and says so. list shows each \
            entry's age, owner, end, reason and the scenario's newest outcomes. Besides these, orchestrate.yml's \
            quarantine.threshold (default 0.3, or off) quarantines a scenario automatically once its flakiness score \
            reaches it, and releases it when the score falls below again.
            """
    )

    @OptionGroup var common: CommonOptions

    @Argument(help: "add | remove | list")
    var action: FlakinessCommands.QuarantineAction

    @Argument(help: "The scenario id, or a part of one.")
    var scenario: String?

    @Option(name: .long, help: "Why (shown by list).")
    var reason: String?

    @Option(name: .long, help: "add: the last day (UTC, YYYY-MM-DD) the quarantine holds; without it, until removed.")
    var until: String?

    @Option(name: .long, help: "add: who owns the quarantined scenario (shown by list and when the quarantine ends).")
    var owner: String?

    @Option(name: .long, help: "table | json")
    var format: OutputFormat = .table

    func run() async throws {
        let logger = common.logger
        try await printing {
            try await FlakinessCommands.quarantine(
                configPath: try common.configPath(), action: action, scenario: scenario, reason: reason,
                until: until, owner: owner, database: common.database, format: format,
                logger: logger
            )
        }
    }
}

struct DB: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "db",
        abstract: "Manage the database: status | stop | url | migrate | expose.",
        usage: "orchestrate db <action> [--listen <address>] [<options>]",
        discussion: """
            The embedded cluster starts on demand and stays running for later queries; `db stop` stops it. It listens on a \
            private unix socket only, until `db expose --listen ADDRESS` opens it to other hosts (CI nodes, agents): TLS \
            with a certificate for ADDRESS signed by a CA made beside the cluster, the application role only, by its \
            generated password. It prints the URL and the CA file for the other hosts, never the password.
            """
    )

    @OptionGroup var common: CommonOptions

    @Argument(help: "status | stop | url | migrate | expose")
    var action: DatabaseCommands.Action

    @Option(name: .long, help: "With expose: the IP address or host name of this host that other hosts reach it by.")
    var listen: String?

    func validate() throws {
        if action == .expose && listen == nil { throw ValidationError("db expose needs --listen ADDRESS") }
        if action != .expose && listen != nil { throw ValidationError("--listen goes with db expose only") }
    }

    func run() async throws {
        let logger = common.logger
        try await printing {
            try await DatabaseCommands.perform(
                action, configPath: try common.configPath(), database: common.database, listen: listen, logger: logger)
        }
    }
}

struct Mock: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The mock server on its own, outside a run.",
        subcommands: [Serve.self]
    )

    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Serve one mock server on 127.0.0.1 until Ctrl-C.",
            usage: "orchestrate mock serve [--port <port>] [--mode <mode>] [<options>]",
            discussion: """
                The app addresses http://127.0.0.1:PORT/<host>/<path>: the first path component is the host it meant, \
                forwarded only when it is in mock.hosts of orchestrate.yml (anything else gets 403). In record mode \
                the exchanges are written to --cassette (HAR 1.2) when the server stops; replay answers from it.
                """
        )

        @OptionGroup var common: CommonOptions

        @Option(
            name: .long, parsing: .unconditional, help: "The port on 127.0.0.1 (0: any free port, printed at start).")
        var port = 0

        @Option(
            name: .long,
            help: "replay, record, live, mock or hybrid (default: mock.mode of orchestrate.yml, else replay).")
        var mode: Mode?

        @Option(name: .long, help: "The HAR cassette to replay from or record into.")
        var cassette: String?

        @Flag(
            name: .long, inversion: .prefixedNo,
            help:
                "Write every exchange and step to the database (as a run of one scenario, mock-serve); --no-log serves without a database."
        )
        var log = true

        func validate() throws {
            guard (0...65535).contains(port) else {
                throw ValidationError("--port must be between 0 and 65535 (got \(port))")
            }
        }

        func run() async throws {
            let logger = common.logger
            try await exiting {
                try await MockCommands.serve(
                    .init(
                        configPath: try common.configPath(), port: port, mode: mode, cassette: cassette,
                        database: common.database, log: log),
                    logger: logger
                )
            }
        }
    }
}

struct GherkinGroup: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gherkin",
        abstract: "Feature files as orchestrate (and Cucumber) read them.",
        subcommands: [Pickles.self]
    )

    struct Pickles: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the pickles of feature files as Cucumber Messages NDJSON.",
            discussion: """
                One `{"pickle": …}` envelope per line for every scenario and every example row: backgrounds prepended, \
                outline placeholders filled, tags inherited, as Cucumber compiles them. A file that does not parse \
                gives `{"parseError": …}` envelopes instead (several per file, each with line and column), the same \
                errors as `file:line:column: message` lines on stderr, and exit status 2.
                """
        )

        @Argument(help: "Feature files.")
        var files: [String]

        func run() throws {
            let status = GherkinCommands.pickles(
                files: files, output: { Console.standard.line($0) }, errors: { Console.standard.note($0) })
            if status != 0 { throw ExitCode(status) }
        }
    }
}
