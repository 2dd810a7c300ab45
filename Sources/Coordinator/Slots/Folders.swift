import Foundation

/// Folder chores on the attempt path, with plain system calls (they run once per attempt).
enum Folders {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Creates `path` and any missing parents.
    static func make(_ path: String) throws {
        if mkdir(path, 0o755) == 0 || errno == EEXIST { return }
        guard errno == ENOENT else { throw Failure(description: "cannot create \(path): \(String(cString: strerror(errno)))") }
        try make((path as NSString).deletingLastPathComponent)
        guard mkdir(path, 0o755) == 0 || errno == EEXIST else {
            throw Failure(description: "cannot create \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Renames `path` to `destination` (same file system). `replacing` removes a folder already at `destination`.
    static func move(_ path: String, to destination: String, replacing: Bool = false) throws {
        if rename(path, destination) == 0 { return }
        if replacing, errno == ENOTEMPTY || errno == EEXIST {
            try? FileManager.default.removeItem(atPath: destination)
            if rename(path, destination) == 0 { return }
        }
        throw Failure(description: "cannot move \(path) to \(destination): \(String(cString: strerror(errno)))")
    }

    /// Makes `path` an existing, empty folder. On the attempt path it usually exists and is empty:
    /// then this is one opendir/readdir and nothing else.
    static func empty(_ path: String) throws {
        guard let empty = isEmpty(path) else { return try make(path) }
        if empty { return }
        let entries = try FileManager.default.contentsOfDirectory(atPath: path)
        for entry in entries {
            let item = "\(path)/\(entry)"
            // An attempt may leave read-only folders behind; make them writable before removing.
            chmod(item, 0o755)
            try FileManager.default.removeItem(atPath: item)
        }
    }

    /// Whether the folder has no entries (reads only its first entries); `nil` when it cannot be opened.
    static func isEmpty(_ path: String) -> Bool? {
        guard let directory = opendir(path) else { return nil }
        defer { closedir(directory) }
        return hasNoEntries(directory)
    }

    /// Whether an open directory stream, read from where it stands, has nothing but `.` and `..`.
    static func hasNoEntries(_ directory: OpaquePointer) -> Bool {
        while let entry = readdir(directory) {
            let isDot = withUnsafeBytes(of: entry.pointee.d_name) { name in
                name[0] == UInt8(ascii: ".") && (name[1] == 0 || (name[1] == UInt8(ascii: ".") && name[2] == 0))
            }
            if !isDot { return false }
        }
        return true
    }
}

/// A folder of a worker slot that must be empty when an attempt starts (its HOME, TMPDIR, artifacts). It is read
/// through a directory stream held open: telling that it is still empty is a rewind and one read, not an open of its
/// long path, four times per attempt. Used by its slot's task alone.
final class ScratchFolder: @unchecked Sendable {
    let path: String
    private var stream: OpaquePointer?

    init(_ path: String) {
        self.path = path
    }

    deinit {
        if let stream { closedir(stream) }
    }

    /// Makes the folder exist and be empty.
    func empty() throws {
        if isEmpty() { return }
        // Emptied in place (the stream still reads it), or made when it did not exist (then there is no stream yet).
        try Folders.empty(path)
        if stream == nil { stream = opendir(path) }
    }

    /// Whether the folder exists and has no entries.
    func isEmpty() -> Bool {
        if stream == nil { stream = opendir(path) }
        guard let stream else { return false }
        rewinddir(stream)
        return Folders.hasNoEntries(stream)
    }

    /// The folder was moved away (kept as an attempt's folder): the next ``empty()`` makes a new one.
    func movedAway() {
        if let stream { closedir(stream) }
        stream = nil
    }
}
