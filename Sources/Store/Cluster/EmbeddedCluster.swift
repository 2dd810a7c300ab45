import Foundation
import Logging
import ProcessSupervisor

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A private PostgreSQL cluster made from the machine's own PostgreSQL: unix socket only, no TCP.
///
/// The default database of `orchestrate` lives under `.orchestrate/postgres`; tests make their own in a
/// temporary folder. When started by root, the server runs as the unprivileged `postgres` user (initdb and
/// postgres refuse root), and the data folder moves to `/var/tmp` if that user cannot reach the project.
package struct EmbeddedCluster: Sendable {
    /// The folder holding the cluster's files (data, log, lock).
    package let root: String
    /// The PostgreSQL data folder (`root/postgres`, or a reachable folder under /var/tmp when run as root).
    package let dataDirectory: String
    /// A short folder for the socket: unix socket paths must stay under 107 bytes.
    package let socketDirectory: String
    package static let port = 5432
    package static let username = "orchestrate"
    package static let database = "postgres"

    package var socketPath: String { "\(socketDirectory)/.s.PGSQL.\(Self.port)" }
    package var logFile: String { "\(dataDirectory)/orchestrate-server.log" }
    package var endpoint: DatabaseEndpoint {
        DatabaseEndpoint(address: .unixSocket(path: socketPath), username: Self.username, database: Self.database)
    }

    package init(root: String) {
        let root = URL(fileURLWithPath: root).standardizedFileURL.path
        self.root = root
        let key = stableHash(root)
        let preferred = "\(root)/postgres"
        if let user = ServerUser.current, !ServerUser.canReach(preferred, as: user) {
            self.dataDirectory = "/var/tmp/orchestrate-\(key)/postgres"
        } else {
            self.dataDirectory = preferred
        }
        self.socketDirectory = "/tmp/orchestrate-\(key)"
    }

    package var isInitialized: Bool { FileManager.default.fileExists(atPath: "\(dataDirectory)/PG_VERSION") }

    /// Whether a server is running on this cluster's data folder: what `pg_ctl status` checks — the postmaster's pid
    /// file names a live process — without starting a program for it (every command with the embedded database asks).
    package func isRunning() async -> Bool {
        guard isInitialized, let text = try? String(contentsOfFile: "\(dataDirectory)/postmaster.pid", encoding: .utf8),
            let first = text.split(separator: "\n").first, let pid = pid_t(first.trimmingCharacters(in: .whitespaces)), pid > 0
        else { return false }
        return kill(pid, 0) == 0 || errno == EPERM
    }

    /// Creates the cluster if needed and starts it in the background, where it stays for later queries.
    /// Safe to call from several processes at once.
    package func startDetached(logger: Logger) async throws(StoreError) {
        try await withClusterLock { () async throws(StoreError) in
            try await prepare(logger: logger)
            if await isRunning() { return }
            let binaries = try PostgresBinaries.locate()
            logger.info("starting the embedded PostgreSQL", metadata: ["postgres.data": "\(dataDirectory)"])
            let status = try await runTool(
                binaries.path("pg_ctl"),
                ["start", "-w", "-t", "60", "-D", dataDirectory, "-l", logFile],
                logger: logger
            )
            guard status == .exited(0) else {
                throw StoreError(.clusterFailed, "PostgreSQL did not start (\(status)); see \(logFile)")
            }
        }
    }

    /// Stops a running cluster (fast shutdown). Returns false when none was running.
    @discardableResult
    package func stop(logger: Logger) async throws(StoreError) -> Bool {
        guard await isRunning() else { return false }
        let binaries = try PostgresBinaries.locate()
        let status = try await runTool(binaries.path("pg_ctl"), ["stop", "-w", "-m", "fast", "-D", dataDirectory], logger: logger)
        guard status == .exited(0) else { throw StoreError(.clusterFailed, "PostgreSQL did not stop (\(status)); see \(logFile)") }
        return true
    }

    /// The server in the foreground, for a supervisor to own: it ends when its owner ends.
    package func foregroundServer() throws(StoreError) -> SupervisedCommand {
        let binaries = try PostgresBinaries.locate()
        var command = SupervisedCommand(
            executable: binaries.path("postgres"),
            arguments: ["-D", dataDirectory],
            environment: toolEnvironment,
            stdoutPath: logFile,
            stderrPath: logFile + ".err"
        )
        command.user = ServerUser.current.map { ($0.uid, $0.gid) }
        command.grace = .seconds(10)
        return command
    }

    /// Creates the folders and, when missing, the cluster itself.
    package func prepare(logger: Logger) async throws(StoreError) {
        let binaries = try PostgresBinaries.locate()
        let user = ServerUser.current
        if geteuid() == 0 && user == nil {
            let name = ProcessInfo.processInfo.environment["ORCHESTRATE_PG_USER"] ?? "postgres"
            throw StoreError(
                .clusterFailed,
                "PostgreSQL refuses to run as root and there is no user \"\(name)\" to run it as: create one (useradd --system postgres) or set ORCHESTRATE_PG_USER"
            )
        }
        do {
            try makeDirectory(socketDirectory, mode: 0o755, owner: user)
            if !isInitialized {
                try makeDirectory((dataDirectory as NSString).deletingLastPathComponent, mode: 0o755, owner: nil)
                try? FileManager.default.removeItem(atPath: dataDirectory)
                try makeDirectory(dataDirectory, mode: 0o700, owner: user)
            }
        } catch {
            throw StoreError(.clusterFailed, "cannot create \(dataDirectory): \(error)")
        }
        guard !isInitialized else { return }
        logger.info("creating the embedded PostgreSQL cluster", metadata: ["postgres.data": "\(dataDirectory)"])
        let status = try await runTool(
            binaries.path("initdb"),
            ["-D", dataDirectory, "-U", Self.username, "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync"],
            logger: logger
        )
        guard status == .exited(0) else {
            try? FileManager.default.removeItem(atPath: dataDirectory)
            throw StoreError(.clusterFailed, "initdb failed (\(status)) for \(dataDirectory)")
        }
        let settings = """

            # orchestrate: unix socket only, in a short folder
            listen_addresses = ''
            port = \(Self.port)
            unix_socket_directories = '\(socketDirectory)'
            max_connections = 200
            synchronous_commit = off
            """
        guard let handle = FileHandle(forWritingAtPath: "\(dataDirectory)/postgresql.conf") else {
            throw StoreError(.clusterFailed, "cannot write \(dataDirectory)/postgresql.conf")
        }
        handle.seekToEndOfFile()
        handle.write(Data(settings.utf8))
        try? handle.close()
    }

    private var toolEnvironment: [String: String] {
        ["PATH": "/usr/bin:/bin", "LANG": "C", "LC_ALL": "C", "TZ": "UTC"]
    }

    private func runTool(_ executable: String, _ arguments: [String], logger: Logger?) async throws(StoreError) -> Termination.Reason {
        var command = SupervisedCommand(
            executable: executable,
            arguments: arguments,
            environment: toolEnvironment,
            workingDirectory: "/",
            stdoutPath: "/tmp/orchestrate-\(UUID().uuidString)-tool.out",
            stderrPath: "/tmp/orchestrate-\(UUID().uuidString)-tool.err"
        )
        command.user = ServerUser.current.map { ($0.uid, $0.gid) }
        command.timeout = .seconds(120)
        defer {
            try? FileManager.default.removeItem(atPath: command.stdoutPath!)
            try? FileManager.default.removeItem(atPath: command.stderrPath!)
        }
        let termination: Termination
        do {
            termination = try await SupervisedProcess.run(command)
        } catch {
            throw StoreError(.clusterFailed, "\(error)")
        }
        if termination.reason != .exited(0), let logger {
            let output = (try? String(contentsOfFile: command.stderrPath!, encoding: .utf8)) ?? ""
            logger.warning("\((executable as NSString).lastPathComponent) failed", metadata: ["output": "\(output)"])
        }
        return termination.reason
    }

    private func withClusterLock<R>(_ body: () async throws(StoreError) -> R) async throws(StoreError) -> R {
        do {
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        } catch {
            throw StoreError(.clusterFailed, "cannot create \(root): \(error)")
        }
        let descriptor = open("\(root)/postgres.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw StoreError(.clusterFailed, "cannot open \(root)/postgres.lock") }
        defer { close(descriptor) }
        flock(descriptor, LOCK_EX)
        defer { flock(descriptor, LOCK_UN) }
        return try await body()
    }
}

private func makeDirectory(_ path: String, mode: Int, owner: ServerUser?) throws {
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    chmod(path, mode_t(mode))
    if let owner { chown(path, owner.uid, owner.gid) }
}

/// A short, stable hex key for a path (FNV-1a, 48 bits).
func stableHash(_ string: String) -> String {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in string.utf8 {
        hash ^= UInt64(byte)
        hash = hash &* 0x100_0000_01b3
    }
    return String(hash & 0xffff_ffff_ffff, radix: 16)
}
