import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Free space on the disks a run writes to (the embedded cluster's data, the project's spool): what an infrastructure
/// error adds when one is full, so that the line names the disk rather than only the symptom (a database that stopped
/// answering).
package enum DiskSpace {
    /// "the disk holding PATH is full (N free of M)" when less than 1% of it, or less than 16 MiB, is free; `nil`
    /// otherwise (or when the path is on no disk that can be asked).
    package static func fullNote(for path: String) -> String? {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        let free = UInt64(info.f_bavail) * UInt64(info.f_frsize)
        let total = UInt64(info.f_blocks) * UInt64(info.f_frsize)
        guard total > 0, free < 16 << 20 || free * 100 < total else { return nil }
        return "the disk holding \(path) is full (\(bytes(free)) free of \(bytes(total)))"
    }

    /// The first of `paths` whose disk is full, said once per disk.
    package static func fullNote(forAny paths: [String]) -> String? {
        paths.lazy.compactMap { fullNote(for: $0) }.first
    }

    static func bytes(_ count: UInt64) -> String {
        count >= 1 << 30
            ? String(format: "%.1f GiB", Double(count) / Double(1 << 30))
            : count >= 1 << 20 ? "\(count >> 20) MiB" : count >= 1 << 10 ? "\(count >> 10) KiB" : "\(count) bytes"
    }
}
