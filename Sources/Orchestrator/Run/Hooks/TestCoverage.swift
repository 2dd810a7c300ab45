import Coordinator
import Foundation
import Logging
import OrchestrateModel
import Reports
import Store

/// The source files each test ran, from the coverage report (``CoverageContexts``, `coverage.json`) an attempt's process
/// left in its artifacts folder, stored with the run for the footprints its judge records. A report that cannot be
/// read or stored is said and changes nothing of the attempt's result: its tests' footprints then have no coverage.
struct TestCoverage: AttemptHooks {
    let runs: RunStore
    let runID: UUID
    /// Where the attempts' processes run: the report's relative paths start there.
    let directory: String
    let logger: Logger

    func attemptWasKept(_ attempt: ClaimedAttempt, result: AttemptResult) async {
        guard let folder = result.folder else { return }
        let read = await blockingOffPool { () -> Result<[String: [String: LineSet]], any Error>? in
            // A file of its own in the folder, never through a link.
            guard let handle = try? FolderHandle(opening: folder),
                case .file = handle.kind(of: CoverageContexts.fileName)
            else { return nil }
            return Result {
                let data = try handle.contents(
                    of: CoverageContexts.fileName, maximumBytes: CoverageContexts.largestReport)
                return try CoverageContexts.read(data, directory: directory)
            }
        }
        guard let read else { return }
        do {
            let ran = try read.get()
            try await abandoning(after: Database.defaultConnectTimeout) {
                try await runs.saveCoverage(runID, report: attempt.id, ran)
            }
        } catch {
            logger.warning(
                "an attempt's coverage report was not taken into its tests' footprints",
                metadata: [
                    "scenario.id": "\(attempt.scenario.id)", "error": "\(error)",
                ])
        }
    }
}
