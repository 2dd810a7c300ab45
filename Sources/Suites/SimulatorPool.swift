import Coordinator
import Foundation
import OrchestrateModel

import struct OrchestrateKit.OrchestrateEnvironment

/// The simulators of a run's slots on this host (`suite.xcodebuild`): each slot's cloned from the configured device the
/// first time it runs an attempt (`xcrun simctl clone`, `boot`, `bootstatus -b`), erased before every later attempt
/// when the config says so, and all of them deleted when the slots stop — a stop by Ctrl-C or SIGTERM too. Its UDID
/// reaches the attempt as ORCHESTRATE_SIMULATOR_UDID.
actor SimulatorPool: AttemptHooks {
    private let xcode: SuiteDefinition.Xcode
    private let context: SuiteContext
    private let runID: UUID
    private var simulators: [Int: String] = [:]

    init(_ xcode: SuiteDefinition.Xcode, context: SuiteContext, runID: UUID) {
        self.xcode = xcode
        self.context = context
        self.runID = runID
    }

    func attemptWillStart(
        _ attempt: ClaimedAttempt, slot: Int, port: PortLease
    ) async throws -> [OrchestrateEnvironment.Variable: String] {
        [.simulator: try await prepare(slot: slot)]
    }

    func slotsDidStop() async {
        await deleteAll()
    }

    /// The UDID of the slot's simulator, booted and (but for its first attempt, when so configured) freshly erased.
    func prepare(slot: Int) async throws -> String {
        if let udid = simulators[slot] {
            if xcode.erase {
                _ = try await simctl(
                    "shutdown \(udid) 2>/dev/null || true; xcrun simctl erase \(udid) && xcrun simctl boot \(udid)")
                _ = try await simctl("bootstatus \(udid) -b")
            }
            return udid
        }
        let name = "orchestrate-\(runID.uuidString.prefix(8).lowercased())-\(slot)"
        let output = try await simctl("clone \(ShellWord.quote(xcode.device)) \(name)")
        guard
            let udid = output.split(whereSeparator: \.isNewline).last.map({ $0.trimmingCharacters(in: .whitespaces) }),
            !udid.isEmpty
        else {
            throw ConfigError(
                .commandFailed, file: context.configPath, line: xcode.line, "xcrun simctl clone printed no simulator id"
            )
        }
        simulators[slot] = udid
        _ = try await simctl("boot \(udid)")
        _ = try await simctl("bootstatus \(udid) -b")
        return udid
    }

    /// Shuts down and deletes every simulator made for the run here; one that will not go is left and said.
    func deleteAll() async {
        for (_, udid) in simulators.sorted(by: { $0.key < $1.key }) {
            do {
                _ = try await simctl("shutdown \(udid) 2>/dev/null; xcrun simctl delete \(udid)")
            } catch {
                context.note("orchestrate: simulator \(udid) was not deleted: \(error)")
            }
        }
        simulators = [:]
    }

    private func simctl(_ arguments: String) async throws -> String {
        try await context.output(
            of: "xcrun simctl \(arguments)", timeout: .seconds(600), line: xcode.line,
            what: "suite.xcodebuild's simulator"
        ).text
    }
}
