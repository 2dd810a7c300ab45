import OrchestrateModel

import struct Foundation.UUID

/// Where what an attempt left is kept: `<attempts>/<run>/<scenario>.attempt-<n>` (its artifacts; its logs unless it
/// passed); `<scenario>.<lane>-attempt-<n>` for the lanes of a compare run. Only attempts that did not pass or left
/// artifacts get one (``AttemptRunner``), directly in the run's folder: a folder per scenario with one per attempt
/// inside would take two directory creations per attempt, each dearer than one in an existing folder.
package enum AttemptFolders {
    package static func path(
        attemptsDirectory: String, runID: UUID, scenarioID: String, attempt: Int, lane: Mode? = nil
    ) -> String {
        "\(attemptsDirectory)/\(runID.uuidString.lowercased())/\(safeName(scenarioID)).\(name(attempt: attempt, lane: lane))"
    }

    /// An attempt's name in folder and file names: `attempt-<n>`, `<lane>-attempt-<n>` in a compare run.
    package static func name(attempt: Int, lane: Mode?) -> String { AttemptName.of(attempt: attempt, lane: lane) }

    package static func path(attemptsDirectory: String, of claimed: ClaimedAttempt) -> String {
        path(
            attemptsDirectory: attemptsDirectory, runID: claimed.runID, scenarioID: claimed.scenario.id,
            attempt: claimed.attempt, lane: claimed.lane)
    }

    /// A file-name-safe form of a scenario id.
    package static func safeName(_ id: String) -> String {
        var bytes = Array(id.utf8.prefix(120))
        for index in bytes.indices {
            switch bytes[index] {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
                break
            default:
                bytes[index] = UInt8(ascii: "_")
            }
        }
        let name = String(decoding: bytes, as: UTF8.self)
        return name.isEmpty || name.hasPrefix(".") ? "_\(name)" : name
    }
}
