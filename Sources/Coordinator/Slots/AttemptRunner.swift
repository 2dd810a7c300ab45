import Foundation
import OrchestrateModel
import ProcessSupervisor

import struct OrchestrateKit.OrchestrateEnvironment

/// Runs one claimed attempt as a real process: its own process group, the env contract, a private
/// HOME/TMPDIR/artifacts folder, a time limit on the whole tree, bounded stdout/stderr.
struct AttemptRunner: Sendable {
    var configuration: CoordinatorConfiguration

    func directory(for claimed: ClaimedAttempt) -> String {
        AttemptFolders.path(attemptsDirectory: configuration.attemptsDirectory, of: claimed)
    }

    /// Runs the attempt to its end. Never throws: what goes wrong around the command is an
    /// `infrastructure-error` outcome. `onLaunch` hands out the process so it can be ended early;
    /// `session` holds contract values of the attempt's mock session that replace the run's.
    ///
    /// HOME, TMPDIR and the artifacts folder (`ORCHESTRATE_ARTIFACTS_DIR`) belong to the slot and are emptied before
    /// every attempt, so nothing carries over from one attempt to the next. What the attempt leaves in the artifacts
    /// folder — with `stdout.log` and `stderr.log` when it did not pass — is moved to the attempt's folder
    /// (``AttemptFolders``) afterwards; an attempt that passed and left nothing gets no folder: a folder per attempt
    /// would be a large share of orchestrate's own work on suites of short scenarios, and leave thousands of empty
    /// folders behind every run.
    func run(
        _ claimed: ClaimedAttempt, slot: SlotResources, session: [OrchestrateEnvironment.Variable: String] = [:],
        onLaunch: (SupervisedProcess) -> Void
    ) async -> (AttemptResult, Termination.Reason?) {
        let clock = ContinuousClock()
        let start = clock.now
        func elapsed() -> Int64 { (clock.now - start).wholeMilliseconds }
        do {
            try slot.artifacts.empty()
            try slot.home.empty()
            try slot.temporary.empty()
        } catch {
            return (AttemptResult(outcome: .infrastructureError, durationMilliseconds: elapsed(), error: "\(error)"), nil)
        }
        // The slot's environment (shared by its attempts), the scenario's own on top (the contract, HOME and TMPDIR
        // win), then the attempt's part of the contract.
        var environment: [String: String] = [:]
        for (key, value) in claimed.scenario.environment where !slot.fixedKeys.contains(key) {
            guard value == Secrets.placeholder else {
                environment[key] = value
                continue
            }
            // A secret is stored as its placeholder: the value comes from this host's configuration.
            guard let secret = configuration.secretEnvironment.value(key, scenario: claimed.scenario.id) else {
                let error = "\(key) is a secret (redact.env) whose value is not known here: run with the orchestrate.yml that planned the run"
                return (AttemptResult(outcome: .infrastructureError, durationMilliseconds: elapsed(), error: error), nil)
            }
            environment[key] = secret
        }
        for (variable, value) in attemptContract(for: claimed).merging(session, uniquingKeysWith: { $1 }) {
            environment[variable.rawValue] = value
            environment[variable.testRunnerName] = value
        }

        var command = SupervisedCommand.shell(claimed.scenario.command, environment: environment)
        command.sharedEnvironment = slot.environment
        command.workingDirectory = configuration.workingDirectory
        command.stdoutPath = slot.stdoutLog
        command.stderrPath = slot.stderrLog
        command.captureHeadBytes = configuration.captureBytes / 2
        command.captureTailBytes = configuration.captureBytes / 2
        command.timeout = .milliseconds(claimed.scenario.timeoutMilliseconds)
        command.grace = configuration.grace

        let termination: Termination
        do {
            let process = try slot.supervisor.launch(command)
            onLaunch(process)
            termination = await process.wait()
        } catch {
            let lost = error.code == .supervisorDied
            return (
                AttemptResult(outcome: .infrastructureError, durationMilliseconds: elapsed(), error: error.description), lost ? .supervisorDied : nil
            )
        }
        if termination.reason == .supervisorDied {
            return (
                AttemptResult(outcome: .infrastructureError, durationMilliseconds: elapsed(), error: "the slot's supervisor died"), .supervisorDied
            )
        }
        let duration = elapsed()
        // A capture file exists only once its stream had output; one left from an earlier attempt is not this one's.
        let stdout = termination.stdoutBytes > 0 ? Self.readCapture(slot.stdoutLog) : ""
        let stderr = termination.stderrBytes > 0 ? Self.readCapture(slot.stderrLog) : ""
        var result = AttemptResult(outcome: .passed, durationMilliseconds: duration, pid: termination.pid, stdout: stdout, stderr: stderr)
        switch termination.reason {
        case .exited(0):
            result.exitCode = 0
        case .exited(let status):
            result.outcome = .failed
            result.exitCode = Int(status)
        case .signaled(let signal):
            result.outcome = .crashed
            result.signal = Int(signal)
        case .timedOut:
            result.outcome = .timedOut
            result.error = "timed out after \(claimed.scenario.timeoutMilliseconds) ms; the process group was ended"
        case .terminated:
            result.outcome = .infrastructureError
            result.error = "ended by orchestrate (the run was interrupted)"
        case .spawnFailed(let code):
            result.outcome = .infrastructureError
            result.error = "cannot start /bin/sh in \(configuration.workingDirectory): \(String(cString: strerror(code)))"
        case .supervisorDied:
            result.outcome = .infrastructureError
        }
        do {
            result.folder = try keep(claimed, from: slot, termination: termination, passed: result.outcome == .passed)
        } catch {
            result.outcome = .infrastructureError
            result.error = [result.error, "\(error)"].compactMap { $0 }.joined(separator: "; ")
        }
        // Output not kept is not left in the slot either (it may hold secrets until the next attempt's replaces it).
        if termination.stdoutBytes > 0 { unlink(slot.stdoutLog) }
        if termination.stderrBytes > 0 { unlink(slot.stderrLog) }
        return (result, termination.reason)
    }

    /// Every secret out of what is kept of an attempt: its captured output and error, and the output files in its
    /// folder (rewritten, or removed when they cannot be).
    static func scrub(_ result: inout AttemptResult, secrets: Secrets) {
        guard !secrets.isEmpty else { return }
        result.stdout = secrets.scrubbed(result.stdout)
        result.stderr = secrets.scrubbed(result.stderr)
        result.error = result.error.map { secrets.scrubbed($0) }
        guard let folder = result.folder else { return }
        for path in ["\(folder)/stdout.log", "\(folder)/stderr.log"] {
            guard let data = FileManager.default.contents(atPath: path), let scrubbed = secrets.scrubbed(Array(data)) else { continue }
            do {
                try AtomicFile.write(Data(scrubbed), to: path)
            } catch {
                unlink(path)
            }
        }
    }

    /// Moves what the attempt left in the slot's artifacts folder, and its output unless it passed, to the attempt's
    /// folder, and returns the folder. Nothing to keep: nothing happens (no folder, `nil`).
    private func keep(_ claimed: ClaimedAttempt, from slot: SlotResources, termination: Termination, passed: Bool) throws -> String? {
        guard !passed || !slot.artifacts.isEmpty() else { return nil }
        // The run's folder exists: the slot's folders are in it.
        let folder = directory(for: claimed)
        // A folder already there is from a try of this attempt that a stopped or killed coordinator left behind.
        slot.artifacts.movedAway()
        try Folders.move(slot.artifacts.path, to: folder, replacing: true)
        guard !passed else { return folder }
        if termination.stdoutBytes > 0 { try Folders.move(slot.stdoutLog, to: "\(folder)/stdout.log") }
        if termination.stderrBytes > 0 { try Folders.move(slot.stderrLog, to: "\(folder)/stderr.log") }
        return folder
    }

    /// The env contract (docs/ARCHITECTURE.md; also exported with the `TEST_RUNNER_` prefix): the slot's part,
    /// the same for every attempt on it, is worked out once per slot, with the run's environment, HOME and TMPDIR.
    func slotEnvironment(_ slot: SlotResources) -> (environment: SharedEnvironment, fixedKeys: Set<String>) {
        let contract: [OrchestrateEnvironment.Variable: String] = [
            .mockURL: "http://127.0.0.1:\(slot.port)",
            .mockPort: "\(slot.port)",
            .controlURL: "http://127.0.0.1:\(slot.port)/__orchestrate",
            .runID: configuration.runID.uuidString.lowercased(),
            .worker: "\(slot.number)",
            .artifactsDirectory: slot.artifacts.path,
        ]
        var environment = configuration.baseEnvironment
        var fixed: [String: String] = ["HOME": slot.home.path, "TMPDIR": slot.temporary.path]
        for (variable, value) in contract {
            fixed[variable.rawValue] = value
            fixed[variable.testRunnerName] = value
        }
        environment.merge(fixed) { $1 }
        return (SharedEnvironment(environment), Set(fixed.keys))
    }

    /// The attempt's part of the contract (a mock session may replace the seed and the clock).
    func attemptContract(for claimed: ClaimedAttempt) -> [OrchestrateEnvironment.Variable: String] {
        [
            .mode: claimed.mode(inRun: configuration.mode).rawValue,
            .scenarioID: claimed.scenario.id,
            .attempt: "\(claimed.attempt)",
            .seed: "\(claimed.scenario.seed)",
            .now: configuration.frozenNow,
        ]
    }

    /// The captured stream as text PostgreSQL accepts (valid UTF-8, no NUL).
    static func readCapture(_ path: String) -> String {
        guard let data = FileManager.default.contents(atPath: path), !data.isEmpty else { return "" }
        return String(decoding: data, as: UTF8.self).replacingOccurrences(of: "\0", with: "\u{FFFD}")
    }
}
