import Foundation
import OrchestrateModel
import ProcessSupervisor
import Reports

import struct OrchestrateKit.OrchestrateEnvironment

/// Runs one claimed attempt as a real process: its own process group, the env contract, a private
/// HOME/TMPDIR/artifacts folder, a time limit on the whole tree, bounded stdout/stderr.
package struct AttemptRunner: Sendable {
    var configuration: CoordinatorConfiguration

    func directory(for claimed: ClaimedAttempt) -> String {
        AttemptFolders.path(attemptsDirectory: configuration.attemptsDirectory, of: claimed)
    }

    /// What became of one test an attempt's process ran.
    package enum Disposition: Sendable {
        /// Its result, with what its runner reported of it (`nil`: its process's exit status alone said).
        case finished(AttemptResult, reported: RunnerTestResult?)
        /// Back to the queue, to run alone: its batch's process ended without reporting it.
        case alone
    }

    /// What became of an attempt's tests, and why its process ended; `slotUnusable` when the slot could not be made
    /// ready (its folders cannot be emptied): the attempt did not run, and the slot must not be used again.
    package struct Ending: Sendable {
        package var dispositions: [Disposition]
        package var reason: Termination.Reason? = nil
        package var slotUnusable: String? = nil

        package init(dispositions: [Disposition], reason: Termination.Reason? = nil, slotUnusable: String? = nil) {
            self.dispositions = dispositions
            self.reason = reason
            self.slotUnusable = slotUnusable
        }
    }

    /// Runs the tests of `attempts` (a batch: the first was claimed, the others with it; usually just the one) in one
    /// process, to its end, and says what became of each, in order. Never throws: what goes wrong around the command is
    /// an `infrastructure-error` outcome. `onLaunch` hands out the process so it can be ended early; `session` holds
    /// contract values of the first attempt's mock session that replace the run's.
    ///
    /// HOME, TMPDIR and the artifacts folder (`ORCHESTRATE_ARTIFACTS_DIR`) belong to the slot and are emptied before
    /// every attempt, so nothing carries over from one attempt to the next. What the attempt leaves in the artifacts
    /// folder — with `stdout.log` and `stderr.log` when it did not pass — is moved to the attempt's folder
    /// (``AttemptFolders``) afterwards; an attempt that passed and left nothing gets no folder: a folder per attempt
    /// would be a large share of orchestrate's own work on suites of short scenarios, and leave thousands of empty
    /// folders behind every run.
    ///
    /// A batch runs with the batch command (``Batch/command(for:)``), under the sum of its tests' time limits. With a
    /// results format (``Scenario/results``), each test's result is what its runner reported of it, as far as its
    /// process's end stands behind it (``dispositions(of:process:format:folder:)``); a test of a batch without that
    /// evidence goes back to the queue to run alone (its id matched nothing, or its process crashed, timed out or
    /// exited non-zero with no failure reported, which a pass it reported does not outweigh). The output and the kept
    /// folder go to the tests that did not pass (the folder to the first), or to the first test when all passed;
    /// results files that said only that everything passed are not kept (a Cucumber scenario's, run alone, are: its
    /// steps are read from them).
    func run(
        _ attempts: [ClaimedAttempt], slot: SlotResources, session: [OrchestrateEnvironment.Variable: String] = [:],
        onLaunch: (SupervisedProcess) -> Void
    ) async -> Ending {
        let claimed = attempts[0]
        let clock = ContinuousClock()
        let start = clock.now
        func elapsed() -> Int64 { (clock.now - start).wholeMilliseconds }
        func everyone(_ result: AttemptResult, _ reason: Termination.Reason? = nil) -> Ending {
            Ending(dispositions: attempts.map { _ in .finished(result, reported: nil) }, reason: reason)
        }
        // Folder work (an earlier attempt may have left a deep tree) and reading reports run off the cooperative pool,
        // whose threads serve every slot's mock server; a slot with nothing to remove, and an ending with nothing to
        // read or move, are seen to here (a thread hop would cost more than they do).
        if !slot.isPrepared,
            let unusable = await blockingOffPool({ () -> String? in
                do {
                    try slot.prepare()
                    return nil
                } catch {
                    return "\(error)"
                }
            })
        {
            // Whatever an earlier attempt left that cannot be removed is not this attempt's failure.
            return Ending(dispositions: attempts.map { _ in .alone }, slotUnusable: unusable)
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
                let error =
                    "\(key) is a secret (redact.env) whose value is not known here: run with the orchestrate.yml that planned the run"
                return everyone(
                    AttemptResult(outcome: .infrastructureError, durationMilliseconds: elapsed(), error: error))
            }
            environment[key] = secret
        }
        for (variable, value) in attemptContract(for: claimed).merging(session, uniquingKeysWith: { $1 }) {
            environment[variable.rawValue] = value
            environment[variable.testRunnerName] = value
        }

        let timeout = Self.timeLimit(of: attempts)
        let text =
            attempts.count > 1
            ? claimed.scenario.batch?.command(for: attempts.map(\.scenario.id)) ?? claimed.scenario.command
            : claimed.scenario.command
        var command = SupervisedCommand.shell(text, environment: environment)
        command.sharedEnvironment = slot.environment
        command.workingDirectory = configuration.workingDirectory
        command.stdoutPath = slot.stdoutLog
        command.stderrPath = slot.stderrLog
        command.captureHeadBytes = configuration.captureBytes / 2
        command.captureTailBytes = configuration.captureBytes / 2
        command.timeout = .milliseconds(timeout)
        command.grace = configuration.grace

        let termination: Termination
        do {
            let process = try slot.supervisor.launch(command)
            onLaunch(process)
            termination = await process.wait()
        } catch {
            let lost = error.code == .supervisorDied
            return everyone(
                AttemptResult(outcome: .infrastructureError, durationMilliseconds: elapsed(), error: error.description),
                lost ? .supervisorDied : nil)
        }
        if termination.reason == .supervisorDied {
            return everyone(
                AttemptResult(
                    outcome: .infrastructureError, durationMilliseconds: elapsed(), error: "the slot's supervisor died"),
                .supervisorDied)
        }
        let duration = elapsed()
        if termination.stdoutBytes == 0, termination.stderrBytes == 0, claimed.scenario.results == nil,
            termination.reason == .exited(0), !slot.artifacts.hasEntries
        {
            return conclude(attempts, slot: slot, termination: termination, duration: duration, timeout: timeout)
        }
        return await blockingOffPool {
            conclude(attempts, slot: slot, termination: termination, duration: duration, timeout: timeout)
        }
    }

    /// What the attempt's process left says of each test (its output, its reports, what to keep), after it ended.
    private func conclude(
        _ attempts: [ClaimedAttempt], slot: SlotResources, termination: Termination, duration: Int64, timeout: Int64
    ) -> Ending {
        let claimed = attempts[0]
        // A capture file exists only once its stream had output; one left from an earlier attempt is not this one's.
        let stdout = termination.stdoutBytes > 0 ? readCapture("stdout.log", of: slot) : ""
        let stderr = termination.stderrBytes > 0 ? readCapture("stderr.log", of: slot) : ""
        var result = AttemptResult(
            outcome: .passed, durationMilliseconds: duration, pid: termination.pid, stdout: stdout, stderr: stderr)
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
            result.error = "timed out after \(timeout) ms; the process group was ended"
        case .terminated:
            result.outcome = .infrastructureError
            result.error = "ended by orchestrate (the run was interrupted)"
        case .spawnFailed(let code):
            result.outcome = .infrastructureError
            result.error =
                "cannot start /bin/sh in \(configuration.workingDirectory): \(String(cString: strerror(code)))"
        case .supervisorDied:
            result.outcome = .infrastructureError
        }
        var dispositions: [Disposition] = attempts.map { _ in .finished(result, reported: nil) }
        if let format = claimed.scenario.results, result.outcome != .infrastructureError {
            dispositions = Self.dispositions(of: attempts, process: result, format: format, folder: slot.artifacts.path)
        }
        // The folder and the output go to the tests that did not pass; all passed, to the first.
        let failing = dispositions.indices.filter { index in
            if case .finished(let result, _) = dispositions[index] { return result.outcome != .passed }
            return false
        }
        let keeper = failing.first ?? 0
        // A Cucumber scenario run alone keeps its report: its steps are read from it.
        if failing.isEmpty, let format = claimed.scenario.results, claimed.scenario.isRunnerTest {
            TestReports.remove(format, in: slot.artifacts.path)
        }
        do {
            let folder = try keep(attempts[keeper], from: slot, termination: termination, passed: failing.isEmpty)
            if case .finished(var kept, let reported) = dispositions[keeper] {
                kept.folder = folder
                dispositions[keeper] = .finished(kept, reported: reported)
            }
        } catch {
            for index in dispositions.indices {
                guard case .finished(var broken, let reported) = dispositions[index] else { continue }
                broken.outcome = .infrastructureError
                broken.error = [broken.error, "\(error)"].compactMap { $0 }.joined(separator: "; ")
                dispositions[index] = .finished(broken, reported: reported)
            }
        }
        // Output not kept is not left in the slot either (it may hold secrets until the next attempt's replaces it).
        if termination.stdoutBytes > 0 { unlink(slot.stdoutLog) }
        if termination.stderrBytes > 0 { unlink(slot.stderrLog) }
        return Ending(dispositions: dispositions, reason: termination.reason)
    }

    /// Each test's result from its runner's reports in `folder` (``TestReports``), by one rule for a test alone and a
    /// batch: a test reported failed failed, with the failure's `file:line` and message; a test reported passed passed
    /// only when its process's end stands behind the report: it exited 0, or exited with a runner's status for failed
    /// tests (1…127, not a shell's report of a signal) while the report names a failure among the tests it ran; a test
    /// reported skipped, only when it exited 0. A test with no result, or whose reported pass its process's end does
    /// not stand behind (a crash, a timeout, a non-zero exit that no reported failure explains), has no evidence of a
    /// pass: in a batch it goes back to run alone (no retry spent), and alone it failed, saying why. Durations are the
    /// runner's, or a share of the rest.
    package static func dispositions(
        of attempts: [ClaimedAttempt], process: AttemptResult, format: ResultsFormat, folder: String
    ) -> [Disposition] {
        let alone = attempts.count == 1
        let reports: [RunnerTestResult]
        do {
            reports = try TestReports.read(format, folder: folder)
        } catch {
            guard alone else { return attempts.map { _ in .alone } }
            return [
                .finished(
                    Self.unproven(process, because: "its \(format.rawValue) report cannot be read: \(error)"),
                    reported: nil)
            ]
        }
        let matched = TestReports.match(
            attempts.map { attempt in
                (
                    attempt.scenario.id,
                    attempt.scenario.uri.flatMap { uri in attempt.scenario.line.map { "\(uri):\($0)" } }
                )
            }, reports)
        // Each reported test's own time, where it is a time at all (a hostile report may say "nan" or 1e300).
        let times = matched.mapValues { $0.seconds.flatMap(Self.milliseconds) }
        let known = times.values.compactMap { $0 }
        let unknown = times.values.count { $0 == nil }
        let share =
            unknown == 0 ? 0 : max(process.durationMilliseconds - known.reduce(0, +), 0) / Int64(unknown)
        let endedWell =
            process.outcome == .passed
            || (process.outcome == .failed && (1...127).contains(process.exitCode ?? 0)
                && attempts.contains { matched[$0.scenario.id]?.status == .failed })
        var dispositions = attempts.map { attempt -> Disposition in
            guard let report = matched[attempt.scenario.id] else {
                guard alone else { return .alone }
                return .finished(
                    Self.unproven(
                        process,
                        because:
                            "its runner reported no result for \(attempt.scenario.id) (no \(format.rawValue) report of it in ORCHESTRATE_ARTIFACTS_DIR)"
                    ), reported: nil)
            }
            var result = process
            result.durationMilliseconds = times[attempt.scenario.id].flatMap { $0 } ?? share
            switch report.status {
            case .failed:
                result.outcome = .failed
                result.exitCode = nil
                result.error = [result.error, report.failure ?? "failed"].compactMap { $0 }.joined(separator: "; ")
            case .passed, .skipped:
                // A skip stands only when the process exited 0: a runner that stopped early (fail-fast) skips what it
                // did not run, and a non-zero exit explained by another test's failure says nothing of it.
                guard endedWell, report.status == .passed || process.outcome == .passed else {
                    guard alone else { return .alone }
                    let said = report.status == .passed ? "passed" : "was skipped"
                    result = Self.unproven(
                        result, because: "its report says it \(said), but its process did not end well")
                    return .finished(result, reported: report)
                }
                result = AttemptResult(
                    outcome: .passed, exitCode: process.exitCode, signal: process.signal,
                    durationMilliseconds: result.durationMilliseconds,
                    pid: process.pid)
            }
            return .finished(result, reported: report)
        }
        if case .finished(var first, let reported) = dispositions.first,
            let startup = startup(of: process, running: attempts.map { matched[$0.scenario.id] })
        {
            first.startupMilliseconds = startup
            first.processMilliseconds = process.durationMilliseconds
            dispositions[0] = .finished(first, reported: reported)
        }
        return dispositions
    }

    /// The time limit of a process running `attempts`: the sum of their limits, or — when every one of them has been
    /// seen — the longest limit and three times what they are expected to take together, whichever is less (a batch
    /// of hundreds would otherwise hold its slot for days on a test that hangs; what it did not report runs again
    /// alone).
    package static func timeLimit(of attempts: [ClaimedAttempt]) -> Int64 {
        let sum = attempts.reduce(0) { $0 + $1.scenario.timeoutMilliseconds }
        let expected = attempts.compactMap(\.expectedMilliseconds)
        guard attempts.count > 1, expected.count == attempts.count else { return sum }
        let longest = attempts.map(\.scenario.timeoutMilliseconds).max() ?? 0
        return min(sum, longest + 3 * expected.reduce(0, +))
    }

    /// The time a process spent outside its tests, when its report timed all of them (`tests`: each test it ran, as
    /// reported): its wall time less the span from the first test's start to the last one's end where the runner says when
    /// each started (tests may run in parallel inside the process), else less the sum of their times.
    package static func startup(of process: AttemptResult, running tests: [RunnerTestResult?]) -> Int64? {
        let reports = tests.compactMap { $0 }
        let times = reports.compactMap { $0.seconds.flatMap(milliseconds) == nil ? nil : $0.seconds }
        guard !tests.isEmpty, reports.count == tests.count, times.count == tests.count else { return nil }
        let starts = reports.compactMap { $0.startedAt.flatMap { $0.isFinite ? $0 : nil } }
        let inside =
            starts.count == reports.count
            ? zip(starts, times).map { $0 + $1 }.max()! - starts.min()!
            : times.reduce(0, +)
        guard let inside = milliseconds(inside) else { return nil }
        let outside = process.durationMilliseconds - inside
        return outside >= 0 ? outside : nil
    }

    /// `seconds` from a report in whole milliseconds, when they are a time at all: finite, not negative, under a
    /// thousand years (a report is outside data: "nan" or 1e300 would otherwise end the process converting them).
    static func milliseconds(_ seconds: Double) -> Int64? {
        guard seconds.isFinite, seconds >= 0, seconds < 3e10 else { return nil }
        return Int64((seconds * 1000).rounded())
    }

    /// `process` as the result of a test whose pass has no evidence: failed (its process's outcome, when that was not a
    /// pass), saying `why`.
    private static func unproven(_ process: AttemptResult, because why: String) -> AttemptResult {
        var failed = process
        if failed.outcome == .passed {
            // Its process ended well: the missing evidence is the failure, not an exit status.
            failed.outcome = .failed
            failed.exitCode = nil
        }
        failed.error = [failed.error, why].compactMap { $0 }.joined(separator: "; ")
        return failed
    }

    /// Every secret out of what is kept of an attempt: its captured output and error, and the output files in its
    /// folder (rewritten, or removed when they cannot be).
    static func scrub(_ result: inout AttemptResult, secrets: Secrets) {
        guard !secrets.isEmpty else { return }
        result.stdout = secrets.scrubbed(result.stdout)
        result.stderr = secrets.scrubbed(result.stderr)
        result.error = result.error.map { secrets.scrubbed($0) }
        result.evidence = result.evidence.map { secrets.scrubbed($0) }
        guard let path = result.folder, let folder = try? FolderHandle(opening: path) else { return }
        for name in ["stdout.log", "stderr.log"] where folder.kind(of: name) != nil {
            do {
                let data = try folder.contents(of: name, maximumBytes: Self.largestLog)
                guard let scrubbed = secrets.scrubbed(Array(data)) else { continue }
                try folder.writeFile(Data(scrubbed), named: name)
            } catch {
                // Not a file of its own, too large to scrub, or not writable: not kept.
                try? folder.remove(name)
            }
        }
    }

    /// Output files of an attempt read to scrub them: larger ones (an attempt's own, not a capture) are not kept.
    static let largestLog = 64 << 20

    /// Moves what the attempt left in the slot's artifacts folder, and its output unless it passed, to the attempt's
    /// folder, and returns the folder. Nothing to keep: nothing happens (no folder, `nil`).
    private func keep(
        _ claimed: ClaimedAttempt, from slot: SlotResources, termination: Termination, passed: Bool
    ) throws -> String? {
        // What is at the artifacts folder's path is kept only when it is a folder (a link is not followed).
        let artifacts = slot.artifacts.hasEntries
        guard !passed || artifacts else { return nil }
        // The run's folder exists: the slot's folders are in it.
        let folder = directory(for: claimed)
        // A folder already there is from a try of this attempt that a stopped or killed coordinator left behind.
        if artifacts {
            slot.artifacts.movedAway()
            try Folders.move(slot.artifacts.path, to: folder, replacing: true)
        } else {
            // Its output alone, in a folder of its own.
            try Folders.remove(folder)
            try Folders.make(folder)
        }
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

    /// The captured stream `name` of the slot as text PostgreSQL accepts (valid UTF-8, no NUL); a file an attempt put
    /// in its place (a link, something larger than a capture) is not read.
    func readCapture(_ name: String, of slot: SlotResources) -> String {
        guard let data = try? slot.handle.contents(of: name, maximumBytes: configuration.captureBytes + 4096),
            !data.isEmpty
        else { return "" }
        return String(decoding: data, as: UTF8.self).replacingOccurrences(of: "\0", with: "\u{FFFD}")
    }
}
