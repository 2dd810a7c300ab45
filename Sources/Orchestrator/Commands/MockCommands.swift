import Foundation
import Logging
import MockServer
import OrchestrateModel
import Store
import UnixSignals

/// `orchestrate mock serve`: one mock server outside a run, until Ctrl-C or SIGTERM.
package enum MockCommands {
    package struct ServeOptions: Sendable {
        package var configPath: String
        package var port: Int
        package var mode: Mode?
        /// The cassette to replay from or record into (record/replay need one).
        package var cassette: String?
        /// `--database`; with `log` false no database is used.
        package var database: String?
        package var log: Bool

        package init(
            configPath: String, port: Int, mode: Mode?, cassette: String?, database: String? = nil, log: Bool = true
        ) {
            self.configPath = configPath
            self.port = port
            self.mode = mode
            self.cassette = cassette
            self.database = database
            self.log = log
        }
    }

    /// Serves until a signal; in record mode the cassette is written when it stops. Exchanges and steps
    /// go to the database as a run of one scenario, `mock-serve`, unless `log` is off.
    package static func serve(
        _ options: ServeOptions, console: Console = .standard, logger: Logger
    ) async throws -> Int32 {
        let config = try ConfigLoader.load(path: options.configPath, required: false)
        let mode = options.mode ?? config.mock.mode
        guard mode != .compare else {
            throw UsageError(.badValue, "mock serve runs one mode: replay, record, live, mock or hybrid")
        }
        if [.replay, .record].contains(mode) && options.cassette == nil {
            throw UsageError(
                .missingValue,
                "--mode \(mode.rawValue) needs --cassette FILE (the HAR file to \(mode == .replay ? "replay" : "record into"))"
            )
        }
        guard options.log else {
            return try await serve(options, mode: mode, config: config, log: nil, console: console, logger: logger)
        }
        return try await ProjectDatabase.open(flag: options.database, config: config, logger: logger) { database in
            let runs = RunStore(database: database)
            var plan = RunPlan(
                host: HostFacts.hostName, gitRevision: nil, workingDirectory: config.directory,
                configPath: options.configPath, mode: mode,
                workers: 1, retries: 0,
                scenarios: [
                    Scenario(id: "mock-serve", name: "orchestrate mock serve", command: "", timeoutMilliseconds: 0)
                ]
            )
            plan.project = config.project
            let attemptID = try await runs.createRunning(plan)
            let writer = NetworkLogWriter.forProject(config.directory, database: database, logger: logger)
            writer.start()
            let status: Int32
            do {
                status = try await serve(
                    options, mode: mode, config: config, log: (writer, attemptID), console: console, logger: logger)
            } catch {
                await writer.close()
                try? await runs.finishRunning(plan.id, attemptID: attemptID)
                throw error
            }
            await writer.close()
            try await runs.finishRunning(plan.id, attemptID: attemptID)
            console.line("exchanges: run \(plan.id.uuidString.lowercased()) (\(writer.written) row(s) written)")
            return status
        }
    }

    private static func serve(
        _ options: ServeOptions, mode: Mode, config: OrchestrateConfig,
        log: (writer: NetworkLogWriter, attemptID: Int64)?, console: Console,
        logger: Logger
    ) async throws -> Int32 {
        let server = MockServer(configuration: config.mock.server, logger: logger) { event in
            if let log { log.writer.append(event) }
            if case .exchange(let exchange) = event, logger.logLevel <= .debug {
                logger.debug(
                    "\(exchange.method) \(exchange.url) → \(exchange.status.map(String.init) ?? "no response")\(exchange.note.map { " (\($0))" } ?? "")"
                )
            }
        }
        do {
            try server.begin(
                MockSession(
                    mode: mode,
                    cassettePath: options.cassette.map {
                        OrchestrateConfig.resolve($0, against: FileManager.default.currentDirectoryPath)
                    },
                    attemptID: log?.attemptID
                ))
            try await server.start(port: options.port)
        } catch {
            await server.shutdown()
            throw error
        }
        let hosts = config.mock.server.hosts.keys.sorted()
        console.line(
            """
            mock server on http://127.0.0.1:\(server.port ?? options.port) (mode \(mode.rawValue)\(options.cassette.map { ", cassette \($0)" } ?? ""))
            hosts: \(hosts.isEmpty ? "none configured (mock.hosts in \(options.configPath))" : hosts.map { "/\($0)/… → \(config.mock.server.hosts[$0]!)" }.joined(separator: ", "))
            stubs: \(config.mock.server.stubs.count); control API: http://127.0.0.1:\(server.port ?? options.port)/__orchestrate/
            Ctrl-C stops it\(mode == .record ? " and writes the cassette" : "")
            """)
        let signals = await UnixSignalsSequence(trapping: .sigint, .sigterm)
        for await _ in signals { break }
        let saved: Cassette?
        do {
            saved = try server.end()
        } catch {
            await server.shutdown()
            throw error
        }
        await server.shutdown()
        if let saved { console.line("recorded \(saved.entries.count) exchange(s) into \(saved.path)") }
        return ExitStatus.passed
    }
}
