import Coordinator
import Foundation
import Logging
import MockServer
import OrchestrateModel
import Store
import Synchronization

/// The mock servers of a run on this host: one per worker slot, listening on the slot's held port for
/// the whole run, with a new session per attempt (mode, the scenario's cassette, seed, frozen clock).
/// Their exchanges go to PostgreSQL in batches (COPY), off the request path.
final class MockFleet: AttemptHooks {
    private let configuration: MockConfiguration
    private let mode: Mode
    private let recordings: String
    private let frozenNow: String
    private let store: ExchangeStore
    private let logger: Logger
    private let state = Mutex(State())

    private struct State {
        var servers: [Int: MockServer] = [:]
        var drains: [Task<Void, Never>] = []
        var pending: [(attemptID: Int64, exchange: Exchange)] = []
    }

    /// Exchanges are written when this many wait, or when an attempt ends.
    static let batchSize = 500

    init(configuration: MockConfiguration, mode: Mode, recordings: String, frozenNow: String, store: ExchangeStore, logger: Logger) {
        self.configuration = configuration
        self.mode = mode
        self.recordings = recordings
        self.frozenNow = frozenNow
        self.store = store
        self.logger = logger
    }

    /// The cassette of a scenario: `<recordings>/<scenario id>.har`.
    func cassette(for scenarioID: String) -> String {
        "\(recordings)/\(AttemptFolders.safeName(scenarioID)).har"
    }

    func attemptWillStart(_ attempt: ClaimedAttempt, slot: Int, port: PortLease) async throws {
        let server = try await server(slot: slot, port: port)
        try server.begin(MockSession(
            mode: mode, cassettePath: cassette(for: attempt.scenario.id), scenarioID: attempt.scenario.id,
            seed: attempt.scenario.seed, now: frozenNow, attemptID: attempt.id
        ))
    }

    func attemptDidEnd(_ attempt: ClaimedAttempt, slot: Int, result: inout AttemptResult) async {
        guard let server = state.withLock({ $0.servers[slot] }) else { return }
        do {
            try server.end()
        } catch {
            result.outcome = .infrastructureError
            result.error = "\(error)"
        }
        await flush()
    }

    func slotsDidStop() async {
        let (servers, drains) = state.withLock { ($0.servers.values.map { $0 }, $0.drains) }
        for server in servers { await server.shutdown() }
        for drain in drains { await drain.value }
        await flush()
    }

    private func server(slot: Int, port: PortLease) async throws -> MockServer {
        if let server = state.withLock({ $0.servers[slot] }) { return server }
        let server = MockServer(configuration: configuration, logger: logger)
        try await server.start(adopting: port.descriptor)
        let drain = Task { [weak self] in
            for await exchange in server.exchanges {
                guard let self, let attemptID = exchange.attemptID else { continue }
                let full = self.state.withLock { state -> Bool in
                    state.pending.append((attemptID, exchange))
                    return state.pending.count >= Self.batchSize
                }
                if full { await self.flush() }
            }
        }
        state.withLock {
            $0.servers[slot] = server
            $0.drains.append(drain)
        }
        return server
    }

    /// Writes what is pending; on a database error the batch stays pending for the next flush.
    private func flush() async {
        let batch = state.withLock { state -> [(attemptID: Int64, exchange: Exchange)] in
            defer { state.pending.removeAll() }
            return state.pending
        }
        guard !batch.isEmpty else { return }
        do {
            try await store.copy(batch)
        } catch {
            logger.warning("writing exchanges failed; keeping them for the next attempt", metadata: ["error": "\(error)"])
            state.withLock { $0.pending.insert(contentsOf: batch, at: 0) }
        }
    }
}
