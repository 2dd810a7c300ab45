import Foundation

/// A run this process took part in and could not see to its end (exit 3, or 130 when it was stopped): the cause, what
/// became of the results it held, and how to take the run up again.
struct RunLeftUnfinished: Error, CustomStringConvertible {
    var runID: UUID
    var joined: Bool
    var underlying: any Error
    var kept = 0
    var lost = 0

    var description: String {
        var text = ExitStatus.describe(underlying)
        if kept > 0 {
            text += "; \(kept) finished result\(kept == 1 ? " is" : "s are") kept for it in .orchestrate/results"
        }
        if lost > 0 { text += "; \(lost) finished result\(lost == 1 ? "" : "s") could not be kept and will run again" }
        return text + "; " + Self.howToTakeUp(runID, joined: joined)
    }

    /// How the run is taken up again: resumed when it was this process's own, joined again when others work it.
    static func howToTakeUp(_ runID: UUID, joined: Bool) -> String {
        let id = runID.uuidString.lowercased()
        return joined
            ? "this host left run \(id) to the others (orchestrate agent --run \(id) takes part again)"
            : "run \(id) is left unfinished: orchestrate run --resume \(id)"
    }
}
