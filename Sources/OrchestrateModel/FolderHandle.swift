import Foundation

#if canImport(Glibc)
import Glibc

private let systemWrite = Glibc.write
#elseif canImport(Darwin)
import Darwin

private let systemWrite = Darwin.write
#endif

/// A folder opened without following a link at its path, whose entries are reached through its descriptor (`openat`,
/// `unlinkat`, `renameat`): what it reads, makes and removes stays inside it, whatever an attempt planted there — links
/// to elsewhere, FIFOs, hard links of other files, trees deeper than `PATH_MAX`.
///
/// ```swift
/// let artifacts = try FolderHandle(opening: path)
/// let report = try artifacts.contents(of: "junit.xml", maximumBytes: 64 << 20)
/// try artifacts.removeContents()
/// ```
package final class FolderHandle: Sendable {
    /// The path it was opened at, for messages.
    package let path: String
    private let descriptor: Int32

    /// Opens the folder at `path`; a link there (or anything but a folder) is an error, not followed, unless
    /// `followingLink` (a folder a user named, taken as they named it).
    package convenience init(opening path: String, followingLink: Bool = false) throws(FolderError) {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | (followingLink ? 0 : O_NOFOLLOW))
        guard descriptor >= 0 else {
            throw errno == ELOOP || errno == ENOTDIR
                ? FolderError(.notOwnFile, "\(path) is a link or a file, not a folder; it is not followed")
                : FolderError.system(errno, "cannot open \(path)")
        }
        self.init(descriptor: descriptor, path: path)
    }

    private init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    deinit { close(descriptor) }

    /// What an entry is, seen without following it.
    package enum Kind: Sendable, Equatable {
        case file(bytes: Int64)
        case folder
        /// A link, a FIFO, a socket, a device.
        case other
    }

    /// The folder's own identity (device and inode): the same folder later, even if its path now names another.
    package var identity: FileIdentity? {
        var status = stat()
        return fstat(descriptor, &status) == 0 ? FileIdentity(status) : nil
    }

    /// What `name` is, or `nil` when there is no such entry.
    package func kind(of name: String) -> Kind? {
        var status = stat()
        guard fstatat(descriptor, name, &status, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
        return Self.kind(status)
    }

    /// The identity of the entry `name`, not followed.
    package func identity(of name: String) -> FileIdentity? {
        var status = stat()
        return fstatat(descriptor, name, &status, AT_SYMLINK_NOFOLLOW) == 0 ? FileIdentity(status) : nil
    }

    /// The names of its entries (without `.` and `..`), in no order; at most `limit`.
    package func names(limit: Int = .max) throws(FolderError) -> [String] {
        try Self.names(of: descriptor, limit: limit, path: path)
    }

    /// Whether it has no entries.
    package var isEmpty: Bool { ((try? names(limit: 1)) ?? [""]).isEmpty }

    /// The contents of the regular file `name`, read only when it is one of this folder's own: not a link, FIFO or
    /// device, not a hard link of a file elsewhere (a link count of 1), at most `maximumBytes`. Anything else is an
    /// error saying what it is.
    package func contents(of name: String, maximumBytes: Int) throws(FolderError) -> Data {
        // O_NONBLOCK: a FIFO planted at the name must not hold the open.
        let file = openat(descriptor, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard file >= 0 else {
            throw errno == ELOOP
                ? FolderError(.notOwnFile, "\(name) is a link, not a file of its own; not read")
                : .system(errno, "cannot read \(name)")
        }
        defer { close(file) }
        var status = stat()
        guard fstat(file, &status) == 0 else { throw .system(errno, "cannot read \(name)") }
        guard Self.kind(status) != .other, status.st_mode & S_IFMT == S_IFREG else {
            throw FolderError(.notOwnFile, "\(name) is not a regular file; not read")
        }
        guard status.st_nlink <= 1 else {
            throw FolderError(.notOwnFile, "\(name) is a hard link of a file elsewhere; not read")
        }
        guard Int64(status.st_size) <= Int64(maximumBytes) else {
            throw FolderError(.tooLarge, "\(name): \(status.st_size) bytes, more than \(maximumBytes) may be read")
        }
        var data = Data(count: Int(status.st_size))
        var read = 0
        while read < data.count {
            let count = data.withUnsafeMutableBytes {
                pread(file, $0.baseAddress! + read, $0.count - read, off_t(read))
            }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw .system(errno, "cannot read \(name)") }
            if count == 0 { break }
            read += count
        }
        // A file that shrank while it was read is what it holds now.
        data.count = read
        return data
    }

    /// The folder `name` inside this one, made when `creating` and missing. A link or a file at the name is an error:
    /// never followed, never replaced.
    package func folder(_ name: String, creating: Bool = false) throws(FolderError) -> FolderHandle {
        if creating, mkdirat(descriptor, name, 0o755) != 0, errno != EEXIST {
            throw .system(errno, "cannot create \(name) in \(path)")
        }
        let child = openat(descriptor, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard child >= 0 else {
            throw errno == ELOOP || errno == ENOTDIR
                ? FolderError(
                    .notOwnFile,
                    "\(path)/\(name) is a link or a file, not a folder; it was not made here and is not followed")
                : .system(errno, "cannot open \(path)/\(name)")
        }
        return FolderHandle(descriptor: child, path: "\(path)/\(name)")
    }

    /// The folder at the relative `path` (components separated by `/`), each made when `creating` and missing; a link
    /// at any of them is an error.
    package func folder(path relative: some StringProtocol, creating: Bool = false) throws(FolderError) -> FolderHandle
    {
        var folder = self
        for component in relative.split(separator: "/") where component != "." {
            guard component != ".." else { throw FolderError(.notOwnFile, "\(relative) leaves \(path)") }
            folder = try folder.folder(String(component), creating: creating)
        }
        return folder
    }

    /// Writes `data` as the file `name`, whole or not at all: a new temporary file beside it (never through a link),
    /// synced, renamed over the name. A link at the name is an error (it was not made here).
    package func writeFile(_ data: Data, named name: String, permissions: mode_t = 0o644) throws(FolderError) {
        if kind(of: name) == .other {
            throw FolderError(.notOwnFile, "\(path)/\(name) is a link or a special file; not written through")
        }
        let temporary = ".\(name).\(UInt64.random(in: 0...UInt64.max)).tmp"
        let file = openat(descriptor, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, permissions)
        guard file >= 0 else { throw .system(errno, "cannot write \(path)/\(name)") }
        var failure: FolderError?
        data.withUnsafeBytes { bytes in
            var written = 0
            while written < bytes.count {
                let count = systemWrite(file, bytes.baseAddress! + written, bytes.count - written)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else {
                    failure = .system(errno, "cannot write \(path)/\(name)")
                    return
                }
                written += count
            }
        }
        if failure == nil, fsync(file) != 0 { failure = .system(errno, "cannot write \(path)/\(name)") }
        close(file)
        if failure == nil, renameat(descriptor, temporary, descriptor, name) != 0 {
            failure = .system(errno, "cannot write \(path)/\(name)")
        }
        if let failure {
            unlinkat(descriptor, temporary, 0)
            throw failure
        }
    }

    /// Removes the entry `name`, whatever it is (a link itself, not what it points at; a folder with all it holds).
    package func remove(_ name: String) throws(FolderError) {
        if unlinkat(descriptor, name, 0) == 0 || errno == ENOENT { return }
        guard errno == EISDIR || errno == EPERM else { throw .system(errno, "cannot remove \(path)/\(name)") }
        try folder(name).removeContents()
        guard unlinkat(descriptor, name, AT_REMOVEDIR) == 0 || errno == ENOENT else {
            throw .system(errno, "cannot remove \(path)/\(name)")
        }
    }

    /// Removes everything in the folder, at any depth, without following links and without building a path: it descends
    /// by descriptor and climbs back through `..` (checked to be the folder it came from), so a tree deeper than
    /// `PATH_MAX`, or folders its owner may not read, are removed like any other. Gives up with an error after
    /// `deadline` (a process that outlived its attempt may be filling it) or when an entry cannot be removed.
    package func removeContents(within deadline: Duration = .seconds(120)) throws(FolderError) {
        let clock = ContinuousClock()
        let start = clock.now
        var current = dup(descriptor)
        guard current >= 0 else { throw .system(errno, "cannot empty \(path)") }
        defer { close(current) }
        // Each folder descended into: its name in its parent (as bytes: a name need not be UTF-8), and the parent's
        // identity.
        var trail: [(name: [CChar], parent: FileIdentity)] = []
        func failure(_ number: Int32, _ what: String) -> FolderError {
            .system(number, "cannot empty \(path): \(what)\(trail.isEmpty ? "" : " (\(trail.count) folders deep)")")
        }
        func shown(_ name: [CChar]) -> String {
            String(decoding: name.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        while true {
            guard clock.now - start < deadline else { throw failure(ETIMEDOUT, "still not empty after \(deadline)") }
            let names: [[CChar]]
            do {
                names = try Self.rawNames(of: current, limit: 256, path: path)
            } catch {
                throw failure(error.number ?? EIO, "cannot list a folder")
            }
            guard !names.isEmpty else {
                guard let last = trail.popLast() else { return }
                let parent = openat(current, "..", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                guard parent >= 0 else { throw failure(errno, "cannot climb back out of a folder") }
                var status = stat()
                guard fstat(parent, &status) == 0, FileIdentity(status) == last.parent else {
                    close(parent)
                    throw failure(ESTALE, "a folder was moved while it was emptied")
                }
                close(current)
                current = parent
                guard unlinkat(current, last.name, AT_REMOVEDIR) == 0 || errno == ENOENT else {
                    throw failure(errno, "cannot remove the folder \(shown(last.name))")
                }
                continue
            }
            for name in names {
                if unlinkat(current, name, 0) == 0 || errno == ENOENT { continue }
                if errno == EACCES {
                    // Its folder was left read-only: made writable again (it is the attempt's own).
                    fchmod(current, 0o700)
                    if unlinkat(current, name, 0) == 0 || errno == ENOENT { continue }
                }
                guard errno == EISDIR || errno == EPERM else { throw failure(errno, "cannot remove \(shown(name))") }
                var child = openat(current, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                if child < 0, errno == EACCES {
                    // A folder nobody may enter: made enterable (never through a link put at its name meanwhile).
                    fchmodat(current, name, 0o700, AT_SYMLINK_NOFOLLOW)
                    child = openat(current, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                }
                guard child >= 0 else { throw failure(errno, "cannot open the folder \(shown(name))") }
                fchmod(child, 0o700)
                var status = stat()
                fstat(current, &status)
                trail.append((name, FileIdentity(status)))
                close(current)
                current = child
                break
            }
        }
    }

    private static func names(of descriptor: Int32, limit: Int, path: String) throws(FolderError) -> [String] {
        try rawNames(of: descriptor, limit: limit, path: path).map {
            String(decoding: $0.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }

    /// The names of the folder's entries as the system has them (NUL-terminated bytes, which need not be UTF-8): what
    /// `*at` calls take back unchanged.
    private static func rawNames(of descriptor: Int32, limit: Int, path: String) throws(FolderError) -> [[CChar]] {
        let copy = dup(descriptor)
        guard copy >= 0, let stream = fdopendir(copy) else {
            let number = errno
            if copy >= 0 { close(copy) }
            throw .system(number, "cannot list \(path)")
        }
        defer { closedir(stream) }
        // The copy shares its position with the descriptor: every listing starts from the beginning.
        rewinddir(stream)
        var names: [[CChar]] = []
        while names.count < limit, let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                Array(bytes.prefix { $0 != 0 }.map { CChar(bitPattern: $0) }) + [0]
            }
            if name != [46, 0] && name != [46, 46, 0] { names.append(name) }
        }
        return names
    }

    private static func kind(_ status: stat) -> Kind {
        switch status.st_mode & S_IFMT {
        case S_IFREG: .file(bytes: Int64(status.st_size))
        case S_IFDIR: .folder
        default: .other
        }
    }
}

/// A file's identity: its device and inode.
package struct FileIdentity: Sendable, Hashable {
    package var device: UInt64
    package var inode: UInt64

    package init(_ status: stat) {
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
    }

    /// The identity of what `path` names, not followed.
    package init?(path: String) {
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        self.init(status)
    }
}

/// What went wrong with a folder's entry: one line naming it, never longer than a few hundred bytes.
package struct FolderError: CodedError {
    package typealias Code = ErrorCode<FolderError>

    package var code: Code
    package var message: String
    /// The `errno` of a failed system call.
    package var number: Int32?

    package init(_ code: Code, _ description: String, number: Int32? = nil) {
        self.code = code
        self.message = Self.bounded(description)
        self.number = number
    }

    static func system(_ number: Int32, _ what: String) -> FolderError {
        FolderError(.system, "\(what): \(String(cString: strerror(number)))", number: number)
    }

    /// Messages name entries and paths an attempt made: they are cut to a line a person can read.
    private static func bounded(_ text: String) -> String {
        text.utf8.count <= 600 ? text : String(text.prefix(280)) + " … " + String(text.suffix(280))
    }
}

extension ErrorCode where Domain == FolderError {
    /// A link, a special file or a hard link where a file of the folder's own was expected.
    package static let notOwnFile = Self("notOwnFile")
    /// A file larger than may be read.
    package static let tooLarge = Self("tooLarge")
    /// A system call failed (``FolderError/number``).
    package static let system = Self("system")
}
