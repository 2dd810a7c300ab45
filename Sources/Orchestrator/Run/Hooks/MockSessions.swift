import Coordinator
import Foundation
import Logging
import MockServer
import OrchestrateModel
import Reports
import Store
import Suites
import Synchronization

import struct OrchestrateKit.OrchestrateEnvironment

/// The mock servers of a run on this host: one per worker slot, listening on the slot's held port for the whole run,
/// with a new session per attempt (the scenario's mode and cassette, seed, frozen clock). Their exchanges and steps go
/// to PostgreSQL through a ``NetworkLogWriter``: handed to it as they happen, written off the request path. A test that
/// reported no steps through the control API may have written Cucumber reports: their steps are read when its session
/// ends.
final class MockSessions: AttemptHooks {
    private let configuration: MockConfiguration
    private let mode: Mode
    private let recordings: String
    private let frozenNow: String
    private let log: NetworkLogWriter
    private let logger: Logger
    private let state = Mutex(State())

    private struct State {
        var servers: [Int: MockServer] = [:]
        var started: [Int: Date] = [:]
        /// Each slot's attempt's exchanges that may show a cause outside the test (``RetryEvidence``), under the
        /// attempt's id: an exchange that outlives its attempt is not the next one's.
        var notable: [Int: (attemptID: Int64, exchanges: RetryEvidence.Notable)] = [:]
    }

    init(
        configuration: MockConfiguration, mode: Mode, recordings: String, frozenNow: String, log: NetworkLogWriter,
        logger: Logger
    ) {
        self.configuration = configuration
        self.mode = mode
        self.recordings = recordings
        self.frozenNow = frozenNow
        self.log = log
        self.logger = logger
    }

    /// The cassette of a scenario:
    /// `<recordings>/<feature path>/<scenario name [example row]>.har` for a pickle, otherwise
    /// `<recordings>/<scenario id>.har`; every component made file-name safe.
    static func cassette(for scenario: Scenario, recordings: String) -> String {
        if let uri = scenario.uri, let name = FeatureDiscovery.name(inID: scenario.id, uri: uri) {
            let folders = uri.dropLast(".feature".count).split(separator: "/").filter { $0 != "." && $0 != ".." }
            return
                ([recordings] + folders.map { AttemptFolders.safeName(String($0)) } + [
                    AttemptFolders.safeName(name) + ".har"
                ])
                .joined(separator: "/")
        }
        return "\(recordings)/\(AttemptFolders.safeName(scenario.id)).har"
    }

    /// Each scenario's cassette under `recordings` (``cassette(for:recordings:)``).
    static func cassettes(in recordings: String) -> @Sendable (Scenario) -> String {
        { cassette(for: $0, recordings: recordings) }
    }

    /// Starts the slot's session; a replayed cassette's clock and seed go to the scenario's environment.
    func attemptWillStart(
        _ attempt: ClaimedAttempt, slot: Int, port: PortLease
    ) async throws -> [OrchestrateEnvironment.Variable: String] {
        let server = try await server(slot: slot, port: port)
        state.withLock {
            $0.started[slot] = Date()
            $0.notable[slot] = (attempt.id, RetryEvidence.Notable())
        }
        let cassettePath = Self.cassette(for: attempt.scenario, recordings: recordings)
        // A compare run's live lane gets the seed its replay lane gets from the cassette.
        let seed =
            attempt.lane == .live
            ? (try? Cassette.load(cassettePath).extras.seed) ?? attempt.scenario.seed : attempt.scenario.seed
        let session = try server.begin(
            MockSession(
                mode: attempt.mode(inRun: mode), cassettePath: cassettePath, scenarioID: attempt.scenario.id,
                seed: seed, now: frozenNow, attemptID: attempt.id
            ))
        var contract: [OrchestrateEnvironment.Variable: String] = [.seed: "\(session.seed ?? seed)"]
        contract[.now] = session.now
        return contract
    }

    func secretsMet(bySlot slot: Int) -> Secrets {
        state.withLock { $0.servers[slot] }?.sessionSecrets ?? Secrets()
    }

    func attemptDidEnd(_ attempt: ClaimedAttempt, slot: Int, result: inout AttemptResult) async {
        guard let server = state.withLock({ $0.servers[slot] }) else { return }
        let reported = server.reportedSteps
        let secrets = server.sessionSecrets
        let failingStep = server.failingStep
        let notable = state.withLock { $0.notable.removeValue(forKey: slot) }?.exchanges.exchanges ?? []
        do {
            try server.end()
        } catch {
            result.outcome = .infrastructureError
            result.error = "\(error)"
        }
        // A test that did not report steps through the control API may have written Cucumber reports (in its
        // artifacts folder, kept when it wrote anything).
        if reported == 0, let folder = result.folder, !attempt.scenario.isRunnerTest {
            let started = state.withLock { $0.started[slot] } ?? Date()
            // Reading and parsing reports happens off the cooperative pool, which serves every slot's mock server.
            for var step in await blockingOffPool({ StepReports.steps(in: folder, attemptStart: started) }) {
                step.name = secrets.scrubbed(step.name)
                step.error = step.error.map { secrets.scrubbed($0) }
                log.append(step, attemptID: attempt.id)
            }
        }
        // The failing step the test reported through the control API (its exchanges carry their step); steps read from
        // a report came after the exchanges, which are then looked at across the attempt. Said for a passed attempt
        // too: in a batch it stands for the process's other tests (``Coordinator``).
        result.evidence = RetryEvidence.exchange(in: notable, failingStep: reported > 0 ? failingStep : nil)
    }

    func attemptWasLost(_ attempt: ClaimedAttempt, slot: Int) async {
        guard let server = state.withLock({ $0.servers[slot] }) else { return }
        _ = try? server.end(keepingRecording: false)
    }

    func slotsDidStop() async {
        for server in state.withLock({ $0.servers.values.map { $0 } }) { await server.shutdown() }
    }

    private func server(slot: Int, port: PortLease) async throws -> MockServer {
        if let server = state.withLock({ $0.servers[slot] }) { return server }
        let server = MockServer(configuration: configuration, logger: logger) { [log, weak self] event in
            log.append(event)
            if case .exchange(let exchange) = event, RetryEvidence.isEvidence(exchange) {
                self?.state.withLock { state in
                    guard let attemptID = state.notable[slot]?.attemptID, exchange.attemptID == attemptID else {
                        return
                    }
                    state.notable[slot]?.exchanges.note(exchange)
                }
            }
        }
        try await server.start(adopting: port.descriptor)
        state.withLock { $0.servers[slot] = server }
        return server
    }
}
