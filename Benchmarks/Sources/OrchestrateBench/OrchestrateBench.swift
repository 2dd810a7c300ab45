import ArgumentParser
import Foundation
import Logging

/// `orchestrate-bench`: the drivers Benchmarks/run.sh measures orchestrate's own paths with (`make bench`). Not part of
/// the product: it is built beside it, never installed.
@main
struct OrchestrateBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "orchestrate-bench",
        abstract: "Benchmark drivers for make bench.",
        subcommands: [Ingest.self, History.self, Plan.self, Claim.self, Panels.self]
    )

    /// The database flag both drivers take (default: ORCHESTRATE_DATABASE_URL, else the current folder's embedded
    /// cluster).
    struct DatabaseOption: ParsableArguments {
        @Option(
            name: .long,
            help: "postgres://user@host/db (default: ORCHESTRATE_DATABASE_URL, else the embedded cluster here).")
        var database: String?

        var logger: Logger {
            var logger = Logger(label: "orchestrate-bench") { StreamLogHandler.standardError(label: $0) }
            logger.logLevel = .warning
            return logger
        }
    }

    struct History: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Fill an empty database with RUNS x SCENARIOS synthetic attempts (with steps, exchanges, verdicts); prints the seconds."
        )

        @OptionGroup var database: DatabaseOption

        @Option(name: .long, help: "Scenarios in the suite.")
        var scenarios = 2_000

        @Option(name: .long, help: "Finished runs.")
        var runs = 500

        @Option(name: .long, help: "Days the runs spread over, the newest now.")
        var days = 180

        func run() async throws {
            print(
                try await BenchCommands.history(
                    scenarios: scenarios, runs: runs, days: days, database: database.database, logger: database.logger))
        }
    }

    struct Ingest: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Write N exchanges (1 KB JSON responses) through the network-log writer; prints the attempt id and seconds."
        )

        @OptionGroup var database: DatabaseOption

        @Option(name: .long, help: "How many exchanges.")
        var count = 100_000

        func run() async throws {
            let (attemptID, seconds) = try await BenchCommands.ingest(
                count: count, database: database.database, logger: database.logger)
            print("\(attemptID) \(seconds)")
        }
    }

    struct Plan: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Plan a run of N scenarios that do nothing, for (f); prints its id.")

        @OptionGroup var database: DatabaseOption

        @Option(name: .long, help: "How many scenarios.")
        var scenarios = 10_000

        func run() async throws {
            print(
                try await BenchCommands.plan(scenarios: scenarios, database: database.database, logger: database.logger)
            )
        }
    }

    struct Claim: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: """
                Work run RUN with SLOTS slots through the coordinator's queue path (RoundBatcher over AttemptQueue: group \
                commit, claim-ahead, fenced rounds), each attempt passing after HOLD milliseconds (at once by default); \
                prints the attempts it completed and the wall-clock times of its first claim and last acknowledgement; \
                heartbeats and reaps as a coordinator does.
                """)

        @OptionGroup var database: DatabaseOption

        @Option(name: .long, help: "The run to work.")
        var run: String

        @Option(name: .long, help: "Slots in this process.")
        var slots = 8

        @Option(name: .long, help: "How long each attempt runs, in milliseconds: a slot's load between its claims.")
        var hold = 0

        @Option(name: .long, help: "A file to write each claim's wait to, in milliseconds, a line each.")
        var latencies: String?

        func run() async throws {
            let claimed = try await BenchCommands.claim(
                runID: UUID(uuidString: run)!, slots: slots, holdMilliseconds: hold, database: database.database,
                logger: database.logger)
            print("\(claimed.completed) \(claimed.start) \(claimed.end)")
            if let latencies {
                try Data(claimed.latencies.map { String(format: "%.3f\n", $0) }.joined().utf8)
                    .write(to: URL(fileURLWithPath: latencies))
            }
        }
    }

    struct Panels: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: """
                Run every panel query of the Grafana dashboards in DIR over the last DAYS (macros expanded as Grafana does, \
                this folder's project, every branch); prints each query's best of 3 in milliseconds, slowest first.
                """)

        @OptionGroup var database: DatabaseOption

        @Option(name: .long, help: "The dashboards folder.")
        var dashboards: String

        @Option(name: .long, help: "The time range: the last DAYS days.")
        var days = 90

        func run() async throws {
            for (milliseconds, panel) in try await BenchCommands.panels(
                dashboards: dashboards, days: days, database: database.database, logger: database.logger)
            {
                print("\(milliseconds) \(panel)")
            }
        }
    }
}
