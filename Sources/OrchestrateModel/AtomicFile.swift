import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes a file so readers see the old content or the new, never half of it (temp + rename).
package enum AtomicFile {
    package static func write(
        _ text: String, to path: String, permissions: mode_t = 0o666, owner: (uid: uid_t, gid: gid_t)? = nil,
        replacing: Bool = true
    ) throws {
        try write(Data(text.utf8), to: path, permissions: permissions, owner: owner, replacing: replacing)
    }

    /// Creates the missing folders, writes a temporary file beside `path` and renames it over `path`.
    ///
    /// The temporary file is made new (never through a link planted at its name) with `permissions` (less the umask)
    /// and given to `owner` before it has any content, so that a private file is never readable by others, not even for
    /// a moment; it reaches the disk before the rename. A link at `path` itself is replaced, not followed. Not
    /// `replacing`, the file is linked in under its name instead, which fails when anything is there already
    /// (`CocoaError.fileWriteFileExists`): even a file made a moment before is never overwritten.
    package static func write(
        _ data: Data, to path: String, permissions: mode_t = 0o666, owner: (uid: uid_t, gid: gid_t)? = nil,
        replacing: Bool = true
    ) throws {
        let url = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let temporary = url.deletingLastPathComponent().appendingPathComponent(
            ".\(url.lastPathComponent).\(UUID().uuidString).tmp"
        ).path
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, permissions)
        guard descriptor >= 0 else { throw failure(temporary) }
        do {
            defer { close(descriptor) }
            if let owner, fchown(descriptor, owner.uid, owner.gid) != 0 { throw failure(temporary) }
            try FileHandle(fileDescriptor: descriptor, closeOnDealloc: false).write(contentsOf: data)
            guard fsync(descriptor) == 0 else { throw failure(temporary) }
        } catch {
            unlink(temporary)
            throw error
        }
        guard replacing ? rename(temporary, path) == 0 : link(temporary, path) == 0 else {
            let error = failure(path)
            unlink(temporary)
            throw error
        }
        if !replacing { unlink(temporary) }
    }

    /// Appends `text` to the end of `path` (`O_APPEND`): what is there is never rewritten. `creating`: the file is made
    /// when missing (0o644 less the umask), never through a link at `path`; otherwise it must be there, and a link is
    /// followed to the file it names.
    package static func append(_ text: String, to path: String, creating: Bool) throws {
        let flags = O_WRONLY | O_APPEND | O_CLOEXEC | (creating ? O_CREAT | O_NOFOLLOW : 0)
        let descriptor = open(path, flags, 0o644)
        guard descriptor >= 0 else { throw failure(path) }
        defer { close(descriptor) }
        try FileHandle(fileDescriptor: descriptor, closeOnDealloc: false).write(contentsOf: Data(text.utf8))
    }

    /// The error of the call that just failed (`errno`), about `path`.
    private static func failure(_ path: String) -> any Error {
        let number = errno
        let code: CocoaError.Code =
            switch number {
            case EACCES, EPERM: .fileWriteNoPermission
            case ENOSPC, EDQUOT: .fileWriteOutOfSpace
            case EROFS: .fileWriteVolumeReadOnly
            case EEXIST: .fileWriteFileExists
            default: .fileWriteUnknown
            }
        return CocoaError(
            code,
            userInfo: [
                NSFilePathErrorKey: path, NSUnderlyingErrorKey: POSIXError(POSIXErrorCode(rawValue: number) ?? .EIO),
            ])
    }
}
