import struct Foundation.UUID

/// Where an attempt's files go: `<attempts>/<run>/<scenario>/attempt-<n>` (HOME, TMPDIR, artifacts, logs).
public enum AttemptFolders {
    public static func path(attemptsDirectory: String, runID: UUID, scenarioID: String, attempt: Int) -> String {
        "\(attemptsDirectory)/\(runID.uuidString.lowercased())/\(safeName(scenarioID))/attempt-\(attempt)"
    }

    /// A file-name-safe form of a scenario id.
    static func safeName(_ id: String) -> String {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")
        let name = String(id.map { allowed.contains($0) ? $0 : "_" }.prefix(120))
        return name.isEmpty || name.hasPrefix(".") ? "_\(name)" : name
    }
}
