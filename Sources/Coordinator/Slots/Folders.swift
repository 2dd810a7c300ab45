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
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { return false }
        }
        return true
    }
}
