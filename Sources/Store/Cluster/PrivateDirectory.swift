import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A folder only its owner may enter (mode 0700), made so that nothing planted at its path is followed or adopted: the
/// embedded cluster's folders live at predictable paths (`/tmp/orchestrate-<hash>`, `/var/tmp/orchestrate-<hash>`) that
/// any local user could claim first.
enum PrivateDirectory {
    /// Makes `path` a private folder of `owner` (the current user when `nil`): creates it, or takes it as it is when it
    /// is already a real folder of `owner` or of one of `adoptable` that nobody else may write in. Anything else — a
    /// symbolic link, a file, a folder of another user, a folder others may write in — is refused with an error naming
    /// it.
    static func ensure(_ path: String, owner: ServerUser?, adoptable: Set<uid_t> = []) throws(StoreError) {
        let uid = owner?.uid ?? geteuid()
        if mkdir(path, 0o700) != 0 {
            guard errno == EEXIST else {
                throw StoreError(.clusterFailed, "cannot create \(path): \(String(cString: strerror(errno)))")
            }
            var info = stat()
            guard lstat(path, &info) == 0 else {
                throw StoreError(.clusterFailed, "cannot inspect \(path): \(String(cString: strerror(errno)))")
            }
            let problem: String? =
                switch info.st_mode & S_IFMT {
                case S_IFLNK: "it is a symbolic link"
                case S_IFDIR:
                    if info.st_uid != uid && !adoptable.contains(info.st_uid) {
                        "it belongs to another user (uid \(info.st_uid))"
                    } else if info.st_mode & (S_IWGRP | S_IWOTH) != 0 {
                        "others may write in it"
                    } else {
                        nil
                    }
                default: "it is not a folder"
                }
            if let problem {
                throw StoreError(
                    .unsafePath,
                    "\(path) is not orchestrate's to use: \(problem). Remove it (it may have been planted by another user), then run again"
                )
            }
        }
        // Through a descriptor that did not follow a link: the folder checked (or made) is the one changed.
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw StoreError(.unsafePath, "\(path) is not orchestrate's to use: \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        if let owner, fchown(descriptor, owner.uid, owner.gid) != 0 {
            throw StoreError(
                .clusterFailed, "cannot give \(path) to \(owner.name): \(String(cString: strerror(errno)))")
        }
        guard fchmod(descriptor, 0o700) == 0 else {
            throw StoreError(.clusterFailed, "cannot make \(path) private: \(String(cString: strerror(errno)))")
        }
    }
}
