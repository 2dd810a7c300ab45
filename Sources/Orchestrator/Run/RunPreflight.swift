import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What `orchestrate run` checks before it starts any work, so that bad input is one line and exit 2 up front, never a
/// failure after every scenario ran: the reports can be written where they go, and this host can hold the slots.
enum RunPreflight {
    /// Open files one worker slot needs at most: its port, the mock server's listening socket and connections, the
    /// supervisor's pipes, its capture files.
    static let openFilesPerSlot = 16
    /// Open files kept for the rest (the database pool, the network log, the event loops, standard streams).
    static let openFilesReserved = 256

    static func check(_ settings: RunSettings) throws {
        let capacity = slotCapacity()
        guard settings.workers.value <= capacity.slots else {
            let whence =
                switch settings.workers.source {
                case .file: "workers: at \(settings.workers.source)"
                case .flag, .environment, .standard: "--workers"
                }
            throw UsageError(
                .beyondHost,
                "\(settings.workers.value) workers are more than this host can hold: at most \(capacity.slots) (open files allowed: "
                    + "\(capacity.openFiles); a worker slot needs about \(openFilesPerSlot)); lower \(whence) or raise ulimit -n"
            )
        }
        let reports = settings.reports
        let named =
            switch reports.source {
            case .flag: "--reports \(reports.value)"
            case .file: "reports: in \(reports.source)"
            case .environment, .standard: "the reports folder"
            }
        try writable(folder: reports.value, named: named)
        if let junit = settings.junit { try checkWritable(junit, named: "--junit") }
    }

    /// A file a command is asked to write (`flag` names the option): not a folder, in a folder that can be written.
    static func checkWritable(_ path: String, named flag: String) throws {
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue {
            throw UsageError(.cannotWrite, "\(flag) \(path): that is a folder; name the file to write")
        }
        try writable(folder: (path as NSString).deletingLastPathComponent, named: "\(flag) \(path)")
    }

    /// How many slots the open files allowed hold; the soft limit is raised to the hard one first.
    static func slotCapacity() -> (slots: Int, openFiles: Int) {
        #if canImport(Glibc)
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #else
        let resource = RLIMIT_NOFILE
        #endif
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return (Int.max, 0) }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(resource, &raised) == 0 { limit = raised }
        }
        let openFiles = limit.rlim_cur == rlim_t.max ? Int(Int32.max) : Int(clamping: limit.rlim_cur)
        return (max((openFiles - openFilesReserved) / openFilesPerSlot, 1), openFiles)
    }

    /// Makes the folder when missing and writes and removes a file in it.
    private static func writable(folder: String, named: String) throws {
        let folder = folder.isEmpty ? "." : folder
        var made = folder.hasPrefix("/") ? "" : "."
        for component in folder.split(separator: "/") {
            made += "/\(component)"
            if mkdir(made, 0o755) != 0 && errno != EEXIST {
                throw UsageError(
                    .cannotWrite, "\(named): cannot make the folder \(made): \(String(cString: strerror(errno)))")
            }
        }
        let probe = "\(folder)/.orchestrate-write-check-\(getpid())"
        let descriptor = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw UsageError(.cannotWrite, "\(named): cannot write in \(folder): \(String(cString: strerror(errno)))")
        }
        close(descriptor)
        unlink(probe)
    }
}
