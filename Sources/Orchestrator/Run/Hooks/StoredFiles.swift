import Coordinator
import Logging
import OrchestrateModel
import Store

/// What an attempt kept (its artifacts, and its output when it did not pass; scrubbed of secrets), stored in the
/// database for the reports and `orchestrate artifacts` on any host. A failure to do so is said and does not change the
/// attempt's result: the files stay on this host.
struct StoredFiles: AttemptHooks {
    let files: AttemptFiles
    let logger: Logger

    func attemptWasKept(_ attempt: ClaimedAttempt, result: AttemptResult) async {
        guard let folder = result.folder else { return }
        do {
            // Bounded like every database call of a slot: a database that does not answer never holds the slot.
            try await abandoning(after: Database.defaultConnectTimeout) {
                try await files.store(attemptID: attempt.id, folder: folder)
            }
        } catch {
            logger.warning(
                "the files an attempt kept were not stored in the database; they are on this host only",
                metadata: [
                    "scenario.id": "\(attempt.scenario.id)", "folder": "\(folder)",
                    "error": "\(Database.describe(error))",
                ])
        }
    }
}
