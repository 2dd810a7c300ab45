import Foundation
import Logging
import OrchestrateModel
import PostgresNIO
import ProcessSupervisor

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A private PostgreSQL cluster made from the machine's own PostgreSQL: unix socket only, no TCP, private to its owner.
///
/// The default database of `orchestrate` lives under `.orchestrate/postgres`; tests make their own in a temporary
/// folder. When started by root, the server runs as the unprivileged `postgres` user (initdb and postgres refuse root),
/// and the data folder moves to `/var/tmp` if that user cannot reach the project.
///
/// Nobody else gets in: the socket's folder and the data folder are private (0700; a link or folder planted at their
/// paths is refused, never followed), every role needs its password (SCRAM), and the passwords are generated and kept
/// in 0600 password files beside the cluster (`postgres.pgpass`, `postgres-admin.pgpass`). Commands connect as
/// `orchestrate_app`, which owns the database and its tables and is no superuser; the superuser `orchestrate` only
/// provisions. A cluster made before this (trusting every local user) is switched over when it next starts.
package struct EmbeddedCluster: Sendable {
    /// The folder holding the cluster's files (data, log, lock, password files).
    package let root: String
    /// The PostgreSQL data folder (`root/postgres`, or a reachable folder under /var/tmp when run as root).
    package let dataDirectory: String
    /// A short folder for the socket: unix socket paths must stay under 107 bytes.
    package let socketDirectory: String
    package static let port = 5432
    /// The role commands connect as: owner of the database and its tables, not a superuser.
    package static let username = "orchestrate_app"
    /// The superuser initdb makes, which only provisions the cluster.
    package static let adminUsername = "orchestrate"
    package static let database = "postgres"

    package var socketPath: String { "\(socketDirectory)/.s.PGSQL.\(Self.port)" }
    package var logFile: String { "\(dataDirectory)/orchestrate-server.log" }
    /// The password file of ``username`` (0600).
    package var passwordFile: String { "\(root)/postgres.pgpass" }
    /// The password file of ``adminUsername`` (0600).
    package var adminPasswordFile: String { "\(root)/postgres-admin.pgpass" }

    package var endpoint: DatabaseEndpoint {
        DatabaseEndpoint(
            address: .unixSocket(path: socketPath), username: Self.username, database: Self.database,
            passwordFile: passwordFile)
    }

    /// The superuser's endpoint: for provisioning, and for tests that make a database per test.
    package var adminEndpoint: DatabaseEndpoint {
        DatabaseEndpoint(
            address: .unixSocket(path: socketPath), username: Self.adminUsername, database: Self.database,
            passwordFile: adminPasswordFile
        )
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
            let first = text.split(separator: "\n").first, let pid = pid_t(first.trimmingCharacters(in: .whitespaces)),
            pid > 0
        else { return false }
        return kill(pid, 0) == 0 || errno == EPERM
    }

    /// Creates the cluster if needed and starts it in the background, where it stays for later queries. Safe to call
    /// from several processes at once. True when this call created the cluster.
    @discardableResult
    package func startDetached(logger: Logger) async throws(StoreError) -> Bool {
        try await withClusterLock { () async throws(StoreError) -> Bool in
            let created = try await prepare(logger: logger)
            if await !isRunning() {
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
            try await provision(logger: logger)
            return created
        }
    }

    /// Stops a running cluster (fast shutdown). Returns false when none was running.
    @discardableResult
    package func stop(logger: Logger) async throws(StoreError) -> Bool {
        guard await isRunning() else { return false }
        let binaries = try PostgresBinaries.locate()
        let status = try await runTool(
            binaries.path("pg_ctl"), ["stop", "-w", "-m", "fast", "-D", dataDirectory], logger: logger)
        guard status == .exited(0) else {
            throw StoreError(.clusterFailed, "PostgreSQL did not stop (\(status)); see \(logFile)")
        }
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

    /// Creates the private folders and, when missing, the cluster itself (its superuser's password generated first).
    /// True when it created the cluster.
    @discardableResult
    package func prepare(logger: Logger) async throws(StoreError) -> Bool {
        let binaries = try PostgresBinaries.locate()
        let user = ServerUser.current
        if geteuid() == 0 && user == nil {
            let name = ProcessInfo.processInfo.environment["ORCHESTRATE_PG_USER"] ?? "postgres"
            throw StoreError(
                .clusterFailed,
                "PostgreSQL refuses to run as root and there is no user \"\(name)\" to run it as: create one (useradd --system postgres) or set ORCHESTRATE_PG_USER"
            )
        }
        // Folders made by earlier versions as root (0755) are taken over.
        let rootOwned: Set<uid_t> = user == nil ? [] : [0]
        try PrivateDirectory.ensure(socketDirectory, owner: user, adoptable: rootOwned)
        let parent = (dataDirectory as NSString).deletingLastPathComponent
        if parent != root { try PrivateDirectory.ensure(parent, owner: user, adoptable: rootOwned) }
        try PrivateDirectory.ensure(dataDirectory, owner: user)
        guard !isInitialized else { return false }
        // What a crashed initdb left behind goes: initdb wants an empty folder.
        try? FileManager.default.removeItem(atPath: dataDirectory)
        try PrivateDirectory.ensure(dataDirectory, owner: user)
        let adminPassword = PasswordFile.generate()
        try PasswordFile.store(adminPasswordFile, username: Self.adminUsername, password: adminPassword)
        logger.info("creating the embedded PostgreSQL cluster", metadata: ["postgres.data": "\(dataDirectory)"])
        let status = try await withPasswordForServer(adminPassword, user: user) { pwfile throws(StoreError) in
            try await runTool(
                binaries.path("initdb"),
                [
                    "-D", dataDirectory, "-U", Self.adminUsername, "--pwfile=\(pwfile)", "--auth-local=scram-sha-256",
                    "--auth-host=scram-sha-256", "--encoding=UTF8", "--locale=C", "--no-sync",
                ],
                logger: logger
            )
        }
        guard status == .exited(0) else {
            try? FileManager.default.removeItem(atPath: dataDirectory)
            throw StoreError(.clusterFailed, "initdb failed (\(status)) for \(dataDirectory)")
        }
        let settings = """

            # orchestrate: unix socket only, in a short private folder; a password (SCRAM) for every role
            listen_addresses = ''
            port = \(Self.port)
            unix_socket_directories = '\(socketDirectory)'
            unix_socket_permissions = 0700
            password_encryption = 'scram-sha-256'
            max_connections = 200
            """
        // Written whole (a new file renamed over initdb's): a cluster never starts on half its settings (the defaults
        // listen on TCP). One whose settings cannot be written (a full disk) goes, to be made again next time.
        do throws(StoreError) {
            let configuration = "\(dataDirectory)/postgresql.conf"
            guard let defaults = try? String(contentsOfFile: configuration, encoding: .utf8) else {
                throw StoreError(.clusterFailed, "cannot read \(configuration) after initdb")
            }
            try writePrivately(defaults + settings, to: configuration, owner: user)
            try writeAccessRules()
        } catch {
            try? FileManager.default.removeItem(atPath: dataDirectory)
            throw error
        }
        return true
    }

    /// Makes the running cluster's roles as orchestrate uses them, once (when ``passwordFile`` is missing): the
    /// non-superuser ``username`` with a generated password owns the database and every table, view and sequence in
    /// it; the superuser has a password; only passwords (SCRAM) are accepted from then on. A cluster made before this
    /// trusted every local user: it is switched over here.
    package func provision(logger: Logger) async throws(StoreError) {
        guard !FileManager.default.fileExists(atPath: passwordFile) else { return }
        // The superuser's password is kept before it is set, so that a provisioning cut short leaves it known.
        let adminPassword: String
        if let kept = PasswordFile.password(
            in: adminPasswordFile, username: Self.adminUsername, database: Self.database)
        {
            adminPassword = kept
        } else {
            adminPassword = PasswordFile.generate()
            try PasswordFile.store(adminPasswordFile, username: Self.adminUsername, password: adminPassword)
        }
        let password = PasswordFile.generate()
        // A cluster that still trusts local users takes the superuser without a password.
        var admin = adminEndpoint
        if accessRulesTrust() { admin.passwordFile = nil }
        do {
            try await Database.with(
                admin, logger: logger, maximumConnections: 1, connectTimeout: .seconds(60), migrate: false
            ) { database in
                try await database.client.withConnection { connection in
                    for statement in Self.provisioning(password: password, adminPassword: adminPassword) {
                        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                    }
                }
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(.clusterFailed, "cannot provision the embedded PostgreSQL: \(Database.describe(error))")
        }
        try writeAccessRules()
        do {
            try await Database.with(adminEndpoint, logger: logger, maximumConnections: 1, migrate: false) { database in
                _ = try await database.client.query("SELECT pg_reload_conf()", logger: logger)
            }
        } catch {
            throw StoreError(
                .clusterFailed, "cannot reload the embedded PostgreSQL's access rules: \(Database.describe(error))")
        }
        try PasswordFile.store(passwordFile, username: Self.username, password: password)
    }

    /// The statements that make the roles (idempotent: a provisioning cut short is done again with a new password).
    static func provisioning(password: String, adminPassword: String) -> [String] {
        func literal(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }
        return [
            """
            DO $$ BEGIN
                IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '\(username)') THEN CREATE ROLE \(username) LOGIN; END IF;
            END $$
            """,
            "ALTER ROLE \(username) LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD \(literal(password))",
            "ALTER ROLE \(adminUsername) PASSWORD \(literal(adminPassword))",
            "ALTER DATABASE \(database) OWNER TO \(username)",
            // Tables (with their indexes and owned sequences), views and sequences of a cluster made before.
            """
            DO $$ DECLARE item record; BEGIN
                FOR item IN SELECT c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                            WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm')
                              AND c.relowner <> (SELECT oid FROM pg_roles WHERE rolname = '\(username)') LOOP
                    EXECUTE format('ALTER %s %I OWNER TO \(username)',
                                   CASE item.relkind WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW' ELSE 'TABLE' END, item.relname);
                END LOOP;
            END $$
            """,
        ]
    }

    /// Local connections by password only; with `network` (``openToNetwork(address:logger:)``) also the application
    /// role over TLS from any address, by password — never the superuser.
    func writeAccessRules(network: Bool = false) throws(StoreError) {
        var rules = "# orchestrate: the unix socket, a password (SCRAM) for every role\nlocal all all scram-sha-256\n"
        if network {
            rules += "# other hosts: TLS only, the application role only\n"
            rules +=
                "hostssl \(Self.database) \(Self.username) 0.0.0.0/0 scram-sha-256\nhostssl \(Self.database) \(Self.username) ::/0 scram-sha-256\n"
        }
        try writePrivately(rules, to: "\(dataDirectory)/pg_hba.conf", owner: ServerUser.current)
    }

    /// Writes a file only `owner` (the current user when `nil`) may read: 0600, whole.
    private func writePrivately(_ text: String, to path: String, owner: ServerUser?) throws(StoreError) {
        do {
            try AtomicFile.write(text, to: path, permissions: 0o600, owner: owner.map { (uid: $0.uid, gid: $0.gid) })
        } catch {
            throw StoreError(.clusterFailed, "cannot write \(path): \(error.localizedDescription)")
        }
    }

    /// Whether the access rules still trust local users (a cluster made before passwords).
    private func accessRulesTrust() -> Bool {
        let rules = (try? String(contentsOfFile: "\(dataDirectory)/pg_hba.conf", encoding: .utf8)) ?? ""
        return rules.split(separator: "\n").contains { line in
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            return fields.first == "local" && fields.last == "trust"
        }
    }

    /// Runs `body` with the password in a file the server user can read (initdb's `--pwfile`), removed afterwards.
    private func withPasswordForServer<R>(
        _ password: String, user: ServerUser?, _ body: (String) async throws(StoreError) -> R
    ) async throws(StoreError) -> R {
        let folder = "/tmp/orchestrate-pw-\(UUID().uuidString.prefix(12).lowercased())"
        try PrivateDirectory.ensure(folder, owner: user)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = "\(folder)/password"
        try writePrivately(password + "\n", to: file, owner: user)
        return try await body(file)
    }

    private var toolEnvironment: [String: String] {
        ["PATH": "/usr/bin:/bin", "LANG": "C", "LC_ALL": "C", "TZ": "UTC"]
    }

    func runTool(
        _ executable: String, _ arguments: [String], logger: Logger?
    ) async throws(StoreError) -> Termination.Reason {
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

/// A short, stable hex key for a path (FNV-1a, 48 bits).
func stableHash(_ string: String) -> String {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in string.utf8 {
        hash ^= UInt64(byte)
        hash = hash &* 0x100_0000_01b3
    }
    return String(hash & 0xffff_ffff_ffff, radix: 16)
}
