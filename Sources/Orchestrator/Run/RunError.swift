import Foundation
import OrchestrateModel

/// A run this process could not see through: its cause first, then what became of the results this process held and
/// how to take the run up again. Exits with the cause's code (3 for infrastructure, 2 for bad input), or 130 for a stop.
struct RunError: CodedError {
    typealias Code = ErrorCode<RunError>

    let code: Code
    let message: String
    /// The exit code this error gives (docs/ARCHITECTURE.md).
    let exitStatus: Int32

    /// The run was left unfinished by a failure; `kept` results wait in .orchestrate/results for it, `lost` will run
    /// again.
    static func leftUnfinished(
        _ runID: UUID, joined: Bool, cause: any Error, kept: Int = 0, lost: Int = 0
    ) -> Self {
        var text = ExitStatus.describe(cause)
        if kept > 0 {
            text += "; \(kept) finished result\(kept == 1 ? " is" : "s are") kept for it in .orchestrate/results"
        }
        if lost > 0 { text += "; \(lost) finished result\(lost == 1 ? "" : "s") could not be kept and will run again" }
        text += "; " + howToTakeUp(runID, joined: joined)
        return Self(code: .leftUnfinished, message: text, exitStatus: ExitStatus.code(for: cause))
    }

    /// An infrastructure failure on a full disk: the disk first (`note`), then what failed.
    static func diskFull(_ note: String, cause: any Error) -> Self {
        Self(code: .diskFull, message: "\(note): \(ExitStatus.describe(cause))", exitStatus: ExitStatus.infrastructure)
    }

    /// A run stopped by a signal whose stop the database did not take (it did not answer): exit 130 all the same.
    static func interruptedUnrecorded(cause: any Error) -> Self {
        Self(
            code: .interruptedUnrecorded,
            message: "interrupted; the run could not be marked so (\(ExitStatus.describe(cause)))",
            exitStatus: ExitStatus.interrupted)
    }

    /// How the run is taken up again: resumed when it was this process's own, joined again when others work it.
    static func howToTakeUp(_ runID: UUID, joined: Bool) -> String {
        let id = runID.uuidString.lowercased()
        return joined
            ? "this host left run \(id) to the others (orchestrate agent --run \(id) takes part again)"
            : "run \(id) is left unfinished: orchestrate run --resume \(id)"
    }
}

extension ErrorCode where Domain == RunError {
    /// A failure (the database, the disk, a process) ended this process's part in the run.
    static let leftUnfinished = Self("leftUnfinished")
    /// The failure happened on a full disk.
    static let diskFull = Self("diskFull")
    /// A stopped run could not be marked interrupted.
    static let interruptedUnrecorded = Self("interruptedUnrecorded")
}
