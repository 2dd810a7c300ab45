import Foundation
import Logging
import OrchestrateModel
import Orchestrator
import Store

/// Drivers for `make bench`: each measures one of orchestrate's own paths so that
/// Benchmarks/run.sh can set it against a peer measured in the same run.
enum BenchCommands {
    /// The current folder as a project without a config: its embedded cluster, unless a database is named.
    static var here: OrchestrateConfig {
        OrchestrateConfig(directory: FileManager.default.currentDirectoryPath, path: "orchestrate.yml")
    }

    /// Sends `count` exchanges with a 1 KB JSON response through the network-log writer (encoding, batches,
    /// COPY) into the database and returns the seconds from the first append until all are written.
    static func ingest(count: Int, database url: String?, logger: Logger) async throws -> (attemptID: Int64, seconds: Double) {
        try await ProjectDatabase.open(flag: url, config: here, logger: logger) { database in
            let attemptID = try await RunStore(database: database).createRunning(
                RunPlan(
                    host: HostFacts.hostName, gitRevision: nil, workingDirectory: FileManager.default.currentDirectoryPath, configPath: nil,
                    mode: .replay, workers: 1, retries: 0,
                    scenarios: [Scenario(id: "bench-ingest", name: "bench ingest", command: "", timeoutMilliseconds: 0)]
                ))
            let body = Array(
                ("{\"items\":[" + (0..<20).map { "{\"id\":\($0),\"name\":\"item \($0) of the bench\"}" }.joined(separator: ",") + "]}").utf8)
            let template = Exchange(
                sequence: 0, mode: .replay, matched: true, host: "api.bench.test", method: "GET", url: "https://api.bench.test/v1/items",
                requestHeaders: [.init(name: "accept", value: "application/json"), .init(name: "user-agent", value: "bench")],
                requestBody: [], status: 200, responseHeaders: [.init(name: "content-type", value: "application/json")],
                responseBody: body, startedAt: Date(), durationMicroseconds: 150
            )
            let writer = NetworkLogWriter.forProject(FileManager.default.currentDirectoryPath, database: database, logger: logger)
            let clock = ContinuousClock.now
            writer.start(interval: .milliseconds(20))
            for sequence in 1...count {
                var exchange = template
                exchange.sequence = sequence
                writer.append(exchange, attemptID: attemptID)
            }
            let left = await writer.close()
            guard left == 0 else { throw StoreError(.unreachable, "\(left) exchange(s) were spooled, not written") }
            let elapsed = ContinuousClock.now - clock
            return (attemptID, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        }
    }

    /// Fills the (empty, migrated) database with ``HistoryGenerator``'s synthetic history; returns the seconds it took.
    static func history(scenarios: Int, runs: Int, days: Int, database url: String?, logger: Logger) async throws -> Double {
        try await ProjectDatabase.open(flag: url, config: here, logger: logger) { database in
            let clock = ContinuousClock.now
            try await HistoryGenerator.generate(database: database, scenarios: scenarios, runs: runs, days: days)
            let elapsed = ContinuousClock.now - clock
            return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        }
    }
}
