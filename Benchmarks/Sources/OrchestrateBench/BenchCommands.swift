import Coordinator
import Foundation
import Logging
import OrchestrateModel
import OrchestrateTesting
import Orchestrator
import PostgresNIO
import Store
import Synchronization

/// Drivers for `make bench`: each measures one of orchestrate's own paths so that
/// Benchmarks/run.sh can set it against a peer measured in the same run.
enum BenchCommands {
    /// The current folder as a project without a config: its embedded cluster, unless a database is named.
    static var here: OrchestrateConfig {
        OrchestrateConfig(directory: FileManager.default.currentDirectoryPath, path: "orchestrate.yml")
    }

    /// Sends `count` exchanges with a 1 KB JSON response through the network-log writer (encoding, batches,
    /// COPY) into the database and returns the seconds from the first append until all are written.
    static func ingest(
        count: Int, database url: String?, logger: Logger
    ) async throws -> (attemptID: Int64, seconds: Double) {
        try await ProjectDatabase.open(flag: url, config: here, logger: logger) { database in
            let attemptID = try await RunStore(database: database).createRunning(
                RunPlan(
                    host: HostFacts.hostName, gitRevision: nil,
                    workingDirectory: FileManager.default.currentDirectoryPath, configPath: nil,
                    mode: .replay, workers: 1, retries: 0,
                    scenarios: [Scenario(id: "bench-ingest", name: "bench ingest", command: "", timeoutMilliseconds: 0)]
                ))
            let body = Array(
                ("{\"items\":["
                    + (0..<20).map { "{\"id\":\($0),\"name\":\"item \($0) of the bench\"}" }.joined(separator: ",")
                    + "]}").utf8)
            let template = Exchange(
                sequence: 0, mode: .replay, matched: true, host: "api.bench.test", method: "GET",
                url: "https://api.bench.test/v1/items",
                requestHeaders: [
                    .init(name: "accept", value: "application/json"), .init(name: "user-agent", value: "bench"),
                ],
                requestBody: [], status: 200, responseHeaders: [.init(name: "content-type", value: "application/json")],
                responseBody: body, startedAt: Date(), durationMicroseconds: 150
            )
            let writer = NetworkLogWriter.forProject(
                FileManager.default.currentDirectoryPath, database: database, logger: logger)
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
    static func history(
        scenarios: Int, runs: Int, days: Int, database url: String?, logger: Logger
    ) async throws -> Double {
        try await ProjectDatabase.open(flag: url, config: here, logger: logger) { database in
            let clock = ContinuousClock.now
            try await HistoryGenerator.generate(
                database: database, project: here.project, scenarios: scenarios, runs: runs, days: days)
            let elapsed = ContinuousClock.now - clock
            return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        }
    }

    /// Plans a run of `scenarios` scenarios whose attempts are never started as processes (the claim driver finishes
    /// them at once); returns the run's id.
    static func plan(scenarios: Int, database url: String?, logger: Logger) async throws -> String {
        try await ProjectDatabase.open(flag: url, config: here, logger: logger) { database in
            let plan = RunPlan(
                host: HostFacts.hostName, gitRevision: nil, workingDirectory: FileManager.default.currentDirectoryPath,
                configPath: nil,
                mode: .replay, workers: 32, retries: 0,
                scenarios: (0..<scenarios).map {
                    Scenario(
                        id: String(format: "noop-%05d", $0), name: "noop \($0)", command: "true", timeoutMilliseconds: 0
                    )
                }
            )
            try await RunStore(database: database).create(plan)
            return plan.id.uuidString.lowercased()
        }
    }

    /// Works the run with `slots` slots through ``RoundBatcher`` and ``AttemptQueue`` as a coordinator does, every
    /// attempt passing after `holdMilliseconds` (a test's run, as far as the queue can tell), with the coordinator's
    /// heartbeat (every third of the lease) and reaper (every half); returns how many it completed, when its first claim
    /// was asked for and its last result acknowledged (seconds since 1970), and how long each claim took to answer
    /// (milliseconds).
    static func claim(
        runID: UUID, slots: Int, holdMilliseconds: Int, database url: String?, logger: Logger
    ) async throws -> (completed: Int, start: Double, end: Double, latencies: [Double]) {
        try await ProjectDatabase.open(flag: url, config: here, logger: logger, maximumConnections: 4) { database in
            let queue = AttemptQueue(database: database)
            let process = WorkerIdentity(host: HostFacts.hostName, pid: getpid(), slot: 0)
            let completed = Atomic<Int>(0)
            let batcher = RoundBatcher(
                runID: runID, workers: slots, process: process, queue: PatientQueue(queue, logger: logger),
                logger: logger, slotLeases: { [] },
                onEvent: { event in if case .attemptFinished = event { completed.add(1, ordering: .relaxed) } })
            let leases = Task {
                let every = queue.lease / 3
                var beats = 0
                while !Task.isCancelled {
                    try? await Task.sleep(for: every)
                    _ = try? await queue.heartbeat(batcher.heldAttempts)
                    beats += 1
                    if beats % 2 == 0 { _ = try? await queue.reapExpired(runID: runID) }
                }
            }
            defer { leases.cancel() }
            let start = Date().timeIntervalSince1970
            let latencies = try await withThrowingTaskGroup(of: [Double].self) { group in
                for slot in 1...slots {
                    group.addTask {
                        let claimant = Claimant(
                            worker: WorkerIdentity(host: process.host, pid: process.pid, slot: slot), port: 0)
                        var mine: [Double] = []
                        while true {
                            let asked = ContinuousClock.now
                            let answer = try await batcher.next(for: claimant)
                            if let claimed = answer.claimed {
                                let took = ContinuousClock.now - asked
                                mine.append(
                                    Double(took.components.seconds) * 1000 + Double(took.components.attoseconds) / 1e15)
                                if holdMilliseconds > 0 { try await Task.sleep(for: .milliseconds(holdMilliseconds)) }
                                batcher.finish(
                                    claimed,
                                    result: AttemptResult(
                                        outcome: .passed, durationMilliseconds: Int64(holdMilliseconds)))
                                continue
                            }
                            var counts = answer.counts
                            if counts == nil { counts = try await queue.counts(runID: runID) }
                            if counts?.isDrained == true { return mine }
                            await batcher.waitForResults(since: answer.recorded, atMost: .milliseconds(100))
                        }
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            try await batcher.flush()
            return (completed.load(ordering: .relaxed), start, Date().timeIntervalSince1970, latencies)
        }
    }

    /// Each panel query of the dashboards under `folder` over the last `days` days, on this folder's project and every
    /// branch: the best of 3 runs in milliseconds and the panel's name, slowest first.
    static func panels(
        dashboards folder: String, days: Int, database url: String?, logger: Logger
    ) async throws -> [(Int, String)] {
        var queries: [(String, String, [GrafanaVariable])] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: folder).filter({ $0.hasSuffix(".json") })
            .sorted()
        {
            let data = try Data(contentsOf: URL(fileURLWithPath: "\(folder)/\(name)"))
            let dashboard = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
            // This folder's project, every branch ("All").
            let variables = GrafanaVariable.variables(of: dashboard).map {
                var variable = $0
                if variable.name == "project" { variable.pick = .values([here.project]) }
                return variable
            }
            for panel in dashboard["panels"] as? [[String: Any]] ?? [] {
                for target in panel["targets"] as? [[String: Any]] ?? [] {
                    queries.append(
                        ("\(name): \(panel["title"] as? String ?? "")", target["rawSql"] as? String ?? "", variables))
                }
            }
        }
        let range = (from: Date().addingTimeInterval(-Double(days) * 86_400), to: Date())
        let panels = queries
        return try await ProjectDatabase.open(flag: url, config: here, logger: logger, maximumConnections: 1) {
            database in
            var timings: [(Int, String)] = []
            for (name, sql, variables) in panels {
                let expanded = GrafanaSQL.expand(sql, variables: variables, range: range)
                var best = Int.max
                for _ in 0..<3 {
                    let clock = ContinuousClock.now
                    for try await _ in try await database.client.query(
                        PostgresQuery(unsafeSQL: expanded), logger: logger)
                    {}
                    let elapsed = ContinuousClock.now - clock
                    best = min(
                        best,
                        Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000))
                }
                timings.append((best, name))
            }
            return timings.sorted { $0.0 > $1.0 }
        }
    }
}
