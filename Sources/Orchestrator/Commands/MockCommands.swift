import Foundation
import Logging
import MockServer
import OrchestrateModel
import UnixSignals

/// `orchestrate mock serve`: one mock server outside a run, until Ctrl-C or SIGTERM.
public enum MockCommands {
    public struct ServeOptions: Sendable {
        public var configPath: String
        public var port: Int
        public var mode: Mode?
        /// The cassette to replay from or record into (record/replay need one).
        public var cassette: String?

        public init(configPath: String, port: Int, mode: Mode?, cassette: String?) {
            self.configPath = configPath
            self.port = port
            self.mode = mode
            self.cassette = cassette
        }
    }

    /// Serves until a signal; in record mode the cassette is written when it stops.
    public static func serve(_ options: ServeOptions, logger: Logger) async throws -> Int32 {
        let config = try RunOrchestration.loadConfig(options.configPath, required: false)
        let mode = options.mode ?? config.mock.mode
        guard mode != .compare else { throw UsageError("mock serve runs one mode: replay, record, live or mock") }
        if [.replay, .record].contains(mode) && options.cassette == nil {
            throw UsageError("--mode \(mode.rawValue) needs --cassette FILE (the HAR file to \(mode == .replay ? "replay" : "record into"))")
        }
        let server = MockServer(configuration: configuration(config.mock), logger: logger)
        do {
            try server.begin(MockSession(
                mode: mode, cassettePath: options.cassette.map { RunOrchestration.resolve($0, against: FileManager.default.currentDirectoryPath) }
            ))
            try await server.start(port: options.port)
        } catch {
            await server.shutdown()
            throw error
        }
        let hosts = config.mock.hosts.keys.sorted()
        FileHandle.standardOutput.write(Data("""
            mock server on http://127.0.0.1:\(server.port ?? options.port) (mode \(mode.rawValue)\(options.cassette.map { ", cassette \($0)" } ?? ""))
            hosts: \(hosts.isEmpty ? "none configured (mock.hosts in \(options.configPath))" : hosts.map { "/\($0)/… → \(config.mock.hosts[$0]!)" }.joined(separator: ", "))
            Ctrl-C stops it\(mode == .record ? " and writes the cassette" : "")

            """.utf8))
        let signals = await UnixSignalsSequence(trapping: .sigint, .sigterm)
        let drain = Task {
            for await exchange in server.exchanges {
                logger.info("\(exchange.method) \(exchange.url) → \(exchange.status.map(String.init) ?? "no response")\(exchange.note.map { " (\($0))" } ?? "")")
            }
        }
        for await _ in signals { break }
        let saved: Cassette?
        do {
            saved = try server.end()
        } catch {
            await server.shutdown()
            throw error
        }
        await server.shutdown()
        _ = await drain.value
        if let saved { print("recorded \(saved.entries.count) exchange(s) into \(saved.path)") }
        return ExitStatus.passed
    }

    /// The mock section of orchestrate.yml as the server's settings.
    static func configuration(_ mock: OrchestrateConfig.Mock) -> MockConfiguration {
        var configuration = MockConfiguration()
        configuration.hosts = mock.hosts
        configuration.redactedHeaders.formUnion(mock.redactHeaders)
        return configuration
    }
}
