/// A file an attempt kept (its artifacts, its logs when it did not pass), as stored.
package struct KeptFile: Sendable, Hashable {
    /// Relative to the attempt's folder.
    package var path: String
    package var bytes: Int64
    /// False when the attempt's cap was reached before it: only its name and size are stored.
    package var stored: Bool

    package init(path: String, bytes: Int64, stored: Bool) {
        self.path = path
        self.bytes = bytes
        self.stored = stored
    }
}

/// What one attempt kept, as stored: its files, and how many more it left that were not recorded at all (past the cap
/// on files per attempt).
package struct KeptFiles: Sendable, Hashable {
    package var files: [KeptFile]
    package var leftOut: Int

    package init(files: [KeptFile] = [], leftOut: Int = 0) {
        self.files = files
        self.leftOut = leftOut
    }

    /// The line that says what was left out; `nil` when nothing was.
    package var leftOutNote: String? {
        leftOut == 0
            ? nil
            : "\(leftOut) more file\(leftOut == 1 ? "" : "s") left out (past the first \(Self.maximumFiles) of the attempt)"
    }

    /// Files recorded per attempt at most, stored or not (a scenario that leaves a million files is cut there).
    package static let maximumFiles = 1000
}
