import Foundation
import OrchestrateModel

/// Folder chores on the attempt path, with plain system calls (they run once per attempt).
enum Folders {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Creates `path` and any missing parents.
    static func make(_ path: String) throws {
        if mkdir(path, 0o755) == 0 || errno == EEXIST { return }
        guard errno == ENOENT else {
            throw Failure(description: "cannot create \(path): \(String(cString: strerror(errno)))")
        }
        try make((path as NSString).deletingLastPathComponent)
        guard mkdir(path, 0o755) == 0 || errno == EEXIST else {
            throw Failure(description: "cannot create \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Renames `path` to `destination` (same file system). `replacing` removes what is already at `destination` (a
    /// folder a stopped coordinator left, at any depth).
    static func move(_ path: String, to destination: String, replacing: Bool = false) throws {
        if rename(path, destination) == 0 { return }
        if replacing, errno == ENOTEMPTY || errno == EEXIST {
            try remove(destination)
            if rename(path, destination) == 0 { return }
        }
        throw Failure(description: "cannot move \(path) to \(destination): \(String(cString: strerror(errno)))")
    }

    /// Removes whatever is at `path` (a folder at any depth; a link itself), through its parent's descriptor.
    static func remove(_ path: String) throws {
        try FolderHandle(opening: (path as NSString).deletingLastPathComponent).remove(
            (path as NSString).lastPathComponent)
    }
}

/// A folder of a worker slot that must be empty when an attempt starts (its HOME, TMPDIR, artifacts), an entry of the
/// slot's folder. It is reached through the slot folder's descriptor, and checked to be the folder it made: an attempt
/// that removes it, or puts a link or another folder in its place, gets a new one, never one emptied through a link
/// or left holding what the attempt put there. Used by its slot's task alone.
final class ScratchFolder: @unchecked Sendable {
    let path: String
    private let name: String
    private let slot: FolderHandle
    /// The folder as last made or emptied, while it is still the one at its path.
    private var handle: FolderHandle?

    init(_ name: String, in slot: FolderHandle) {
        self.name = name
        self.slot = slot
        path = "\(slot.path)/\(name)"
    }

    /// The folder at the path, when it is still the one this made.
    private var current: FolderHandle? {
        guard let handle, let identity = handle.identity, slot.identity(of: name) == identity else { return nil }
        return handle
    }

    /// Makes the folder exist and be empty, whatever the last attempt left there (any depth, links, read-only folders).
    /// A folder that held anything is replaced by a new one: emptied in place it would keep the size of what it held
    /// (a folder that once held 100,000 entries is long to read even empty), and every attempt reads it.
    func empty() throws(FolderError) {
        if let current, current.isEmpty { return }
        handle = nil
        try slot.remove(name)
        handle = try slot.folder(name, creating: true)
    }

    /// Whether ``empty()`` has nothing to do: the folder at the path is still the one this made, and it is empty.
    var isEmptied: Bool { current?.isEmpty == true }

    /// Whether a real folder (not a link, not a file) is at the path and it has entries: what may be kept of an
    /// attempt.
    var hasEntries: Bool { (try? slot.folder(name))?.isEmpty == false }

    /// The folder was moved away (kept as an attempt's folder): the next ``empty()`` makes a new one.
    func movedAway() { handle = nil }
}
