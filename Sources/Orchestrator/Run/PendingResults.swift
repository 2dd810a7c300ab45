import Coordinator
import Foundation
import OrchestrateModel
import Store
import Synchronization

/// Results this process's slots finished while the database stopped answering for good: kept in a file of the project
/// (`.orchestrate/results/<run>-<pid>.json`, scrubbed of secrets as every result is), so that the run, taken up again
/// on this host (`run --resume`, or joined again), records them instead of running those tests again.
final class PendingResults: AttemptHooks {
    let directory: String
    let runID: UUID
    private let counts = Mutex((kept: 0, lost: 0))

    init(projectDirectory: String, runID: UUID) {
        directory = "\(projectDirectory)/.orchestrate/results"
        self.runID = runID
    }

    /// Results kept so far, and results that could not be (their file could not be written: a full disk).
    var kept: Int { counts.withLock { $0.kept } }
    var lost: Int { counts.withLock { $0.lost } }

    private struct Entry: Codable {
        var claimed: ClaimedAttempt
        var result: AttemptResult
    }

    /// The slots' results the queue never recorded: kept.
    func resultsWereNotRecorded(_ results: [(claimed: ClaimedAttempt, result: AttemptResult)]) async {
        keep(results)
    }

    /// Writes `results` to this process's file for the run, whole or not at all.
    func keep(_ results: [(claimed: ClaimedAttempt, result: AttemptResult)]) {
        guard !results.isEmpty else { return }
        do {
            let data = try JSONEncoder().encode(results.map { Entry(claimed: $0.claimed, result: $0.result) })
            try AtomicFile.write(data, to: "\(directory)/\(Self.prefix(runID))\(getpid()).json", permissions: 0o600)
            counts.withLock { $0.kept += results.count }
        } catch {
            counts.withLock { $0.lost += results.count }
        }
    }

    /// Records in `queue` what processes of this host kept for the run (their files, then removed). Returns how many
    /// results the queue took, and how many it refused (their attempts were taken back meanwhile and run again).
    static func replay(
        runID: UUID, projectDirectory: String, queue: AttemptQueue
    ) async throws -> (recorded: Int, refused: Int) {
        let directory = "\(projectDirectory)/.orchestrate/results"
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter {
            $0.hasPrefix(prefix(runID)) && $0.hasSuffix(".json")
        }
        var recorded = 0
        var refused = 0
        for name in names.sorted() {
            let path = "\(directory)/\(name)"
            guard let data = FileManager.default.contents(atPath: path),
                let entries = try? JSONDecoder().decode([Entry].self, from: data)
            else {
                continue
            }
            let completions = entries.filter { $0.claimed.runID == runID }.map { ($0.claimed, $0.result) }
            if !completions.isEmpty {
                let reply = try await queue.round(QueueRound(runID: runID, completions: completions))
                recorded += reply.acks.count { $0.accepted }
                refused += reply.acks.count { !$0.accepted }
            }
            unlink(path)
        }
        return (recorded, refused)
    }

    private static func prefix(_ runID: UUID) -> String { "\(runID.uuidString.lowercased())-" }
}
