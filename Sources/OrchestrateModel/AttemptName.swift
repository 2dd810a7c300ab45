/// An attempt's name in folder and file names: `attempt-<n>`, `<lane>-attempt-<n>` in a compare run.
package enum AttemptName {
    package static func of(attempt: Int, lane: Mode?) -> String {
        "\(lane.map { "\($0.rawValue)-" } ?? "")attempt-\(attempt)"
    }
}
