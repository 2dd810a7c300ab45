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
