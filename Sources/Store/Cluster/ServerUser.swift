import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The unprivileged user the PostgreSQL server runs as when orchestrate runs as root.
struct ServerUser: Sendable {
    let name: String
    let uid: UInt32
    let gid: UInt32

    /// `nil` when not root: then the server runs as the current user.
    static var current: ServerUser? {
        guard geteuid() == 0 else { return nil }
        let name = ProcessInfo.processInfo.environment["ORCHESTRATE_PG_USER"] ?? "postgres"
        // getpwnam_r: the plain getpwnam's static buffer is shared by every thread of the process.
        var entry = passwd()
        var found: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getpwnam_r(name, &entry, &buffer, buffer.count, &found) == 0, found != nil else { return nil }
        return ServerUser(name: name, uid: entry.pw_uid, gid: entry.pw_gid)
    }

    /// Whether `user` can walk down to `path` (every existing ancestor searchable by it).
    static func canReach(_ path: String, as user: ServerUser) -> Bool {
        var components = URL(fileURLWithPath: path).standardizedFileURL.pathComponents
        components.removeLast()
        var current = ""
        for component in components {
            current = current.isEmpty ? component : (current == "/" ? "/\(component)" : "\(current)/\(component)")
            var info = stat()
            guard stat(current, &info) == 0 else { return true }  // created later, by us, searchable
            let mode = info.st_mode
            let searchable: Bool
            if info.st_uid == user.uid {
                searchable = mode & S_IXUSR != 0
            } else if info.st_gid == user.gid {
                searchable = mode & S_IXGRP != 0
            } else {
                searchable = mode & S_IXOTH != 0
            }
            if !searchable { return false }
        }
        return true
    }
}
