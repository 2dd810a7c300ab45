import Coordinator
import Foundation
import Logging
import MockServer
import OrchestrateModel
import Reports
import Store
import Synchronization

import struct OrchestrateKit.OrchestrateEnvironment

/// The mock servers of a run on this host: one per worker slot, listening on the slot's held port for
/// the whole run, with a new session per attempt (the scenario's mode and cassette, seed, frozen clock).
/// Their exchanges and steps go to PostgreSQL through a ``NetworkLogWriter``: handed to it as they happen, written off the
/// request path.
final class MockFleet: AttemptHooks {
    private let configuration: MockConfiguration
    private let mode: Mode
    private let recordings: String
    private let frozenNow: String
    private let log: NetworkLogWriter
    private let logger: Logger
    private let state = Mutex(State())
    /// Where what attempts kept is stored for other hosts; `nil`: nowhere.
    private let files: AttemptFiles?
    /// The slots' simulators (`suite.xcodebuild`).
    private let simulators: SimulatorPool?
    /// Where results the queue never recorded are kept; `nil`: nowhere.
    private let pending: PendingResults?

    private struct State {
        var servers: [Int: MockServer] = [:]
        var started: [Int: Date] = [:]
    }

    init(
        configuration: MockConfiguration, mode: Mode, recordings: String, frozenNow: String, log: NetworkLogWriter, logger: Logger,
        files: AttemptFiles? = nil, simulators: SimulatorPool? = nil, pending: PendingResults? = nil
    ) {
        self.files = files
        self.pending = pending
        self.simulators = simulators
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
            return ([recordings] + folders.map { AttemptFolders.safeName(String($0)) } + [AttemptFolders.safeName(name) + ".har"])
                .joined(separator: "/")
        }
        return "\(recordings)/\(AttemptFolders.safeName(scenario.id)).har"
    }

    /// Each scenario's cassette under `recordings` (``cassette(for:recordings:)``).
    static func cassettes(in recordings: String) -> @Sendable (Scenario) -> String {
        { cassette(for: $0, recordings: recordings) }
    }

    /// Starts the slot's session; a replayed cassette's clock and seed go to the scenario's environment.
    func attemptWillStart(_ attempt: ClaimedAttempt, slot: Int, port: PortLease) async throws -> [OrchestrateEnvironment.Variable: String] {
        let server = try await server(slot: slot, port: port)
        state.withLock { $0.started[slot] = Date() }
        let cassettePath = Self.cassette(for: attempt.scenario, recordings: recordings)
        // A compare run's live lane gets the seed its replay lane gets from the cassette.
        let seed = attempt.lane == .live ? (try? Cassette.load(cassettePath).extras.seed) ?? attempt.scenario.seed : attempt.scenario.seed
        let session = try server.begin(
            MockSession(
                mode: attempt.mode(inRun: mode), cassettePath: cassettePath, scenarioID: attempt.scenario.id,
                seed: seed, now: frozenNow, attemptID: attempt.id
            ))
        var contract: [OrchestrateEnvironment.Variable: String] = [.seed: "\(session.seed ?? seed)"]
        contract[.now] = session.now
        if let simulators { contract[.simulator] = try await simulators.prepare(slot: slot) }
        return contract
    }

    func secretsMet(bySlot slot: Int) -> Secrets {
        state.withLock { $0.servers[slot] }?.sessionSecrets ?? Secrets()
    }

    func attemptDidEnd(_ attempt: ClaimedAttempt, slot: Int, result: inout AttemptResult) async {
        guard let server = state.withLock({ $0.servers[slot] }) else { return }
        let reported = server.reportedSteps
        let secrets = server.sessionSecrets
        do {
            try server.end()
        } catch {
            result.outcome = .infrastructureError
            result.error = "\(error)"
        }
        // A test that did not report steps through the control API may have written Cucumber reports (in its
        // artifacts folder, kept when it wrote anything).
        guard reported == 0, let folder = result.folder, !attempt.scenario.isRunnerTest else { return }
        let started = state.withLock { $0.started[slot] } ?? Date()
        // Reading and parsing reports happens off the cooperative pool, which serves every slot's mock server.
        for var step in await blockingOffPool({ StepReports.steps(in: folder, attemptStart: started) }) {
            step.name = secrets.scrubbed(step.name)
            step.error = step.error.map { secrets.scrubbed($0) }
            log.append(step, attemptID: attempt.id)
        }
    }

    /// A test its runner reported (scrubbed of secrets): the step of a runner's test (``Scenario/isRunnerTest``), named
    /// by its id, with the failure's `file:line` before its message. A Cucumber scenario's steps come from its report.
    func testWasReported(_ attempt: ClaimedAttempt, _ reported: RunnerTestResult, result: AttemptResult) async {
        guard attempt.scenario.isRunnerTest else { return }
        let finished = Date()
        log.append(
            Step(
                position: 1, keyword: "", name: attempt.scenario.id, status: reported.status.rawValue,
                startedAt: finished.addingTimeInterval(-Double(result.durationMilliseconds) / 1000), finishedAt: finished,
                error: reported.failure),
            attemptID: attempt.id)
    }

    func attemptWasLost(_ attempt: ClaimedAttempt, slot: Int) async {
        guard let server = state.withLock({ $0.servers[slot] }) else { return }
        _ = try? server.end(keepingRecording: false)
    }

    /// Stores what the attempt kept, for the reports and `orchestrate artifacts` on any host; a failure to do so is said
    /// and does not change the attempt's result (the files stay on this host).
    func attemptWasKept(_ attempt: ClaimedAttempt, result: AttemptResult) async {
        guard let files, let folder = result.folder else { return }
        do {
            // Bounded like every database call of a slot: a database that does not answer never holds the slot.
            try await within(Database.defaultConnectTimeout) { try await files.store(attemptID: attempt.id, folder: folder) }
        } catch {
            logger.warning(
                "the files an attempt kept were not stored in the database; they are on this host only",
                metadata: ["scenario.id": "\(attempt.scenario.id)", "folder": "\(folder)", "error": "\(Database.describe(error))"])
        }
    }

    func resultsWereNotRecorded(_ results: [(claimed: ClaimedAttempt, result: AttemptResult)]) async {
        pending?.keep(results)
    }

    func slotsDidStop() async {
        for server in state.withLock({ $0.servers.values.map { $0 } }) { await server.shutdown() }
        await simulators?.deleteAll()
    }

    private func server(slot: Int, port: PortLease) async throws -> MockServer {
        if let server = state.withLock({ $0.servers[slot] }) { return server }
        let server = MockServer(configuration: configuration, logger: logger) { [log] in log.append($0) }
        try await server.start(adopting: port.descriptor)
        state.withLock { $0.servers[slot] = server }
        return server
    }
}

extension NetworkLogWriter {
    /// The writer of a project: its spool under `<project>/.orchestrate/spool`.
    package static func forProject(_ directory: String, database: Database, logger: Logger) -> NetworkLogWriter {
        NetworkLogWriter(
            store: ExchangeStore(database: database), spoolDirectory: "\(directory)/.orchestrate/spool", logger: logger
        )
    }

    /// Files an event of a mock server under its attempt (events outside an attempt are not kept).
    func append(_ event: MockEvent) {
        switch event {
        case .exchange(let exchange):
            if let attemptID = exchange.attemptID { append(exchange, attemptID: attemptID) }
        case .step(let step, let attemptID?):
            append(step, attemptID: attemptID)
        case .step(_, nil):
            break
        }
    }
}
