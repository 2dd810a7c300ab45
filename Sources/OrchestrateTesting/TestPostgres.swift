import Foundation
import Logging
import OrchestrateModel
import PostgresNIO
import ProcessSupervisor
import Store

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A private PostgreSQL cluster for the test process, on a unix socket in a temporary folder.
///
/// The server runs in the foreground under a supervisor, so it ends when the test process ends,
/// however that happens. Each test gets its own database in it. When no cluster can be started
/// the test fails — it never skips.
package actor TestPostgres {
    package static let shared = TestPostgres()

    /// The cluster and its server process (held so it lives as long as the test process).
    private var started: Task<(EmbeddedCluster, SupervisedProcess), any Error>?
    private var counter = 0

    /// A fresh, empty database in the shared cluster.
    package func makeDatabase() async throws -> DatabaseEndpoint {
        let cluster = try await cluster()
        counter += 1
        let name = "t\(getpid())_\(counter)_\(UInt32.random(in: 0...UInt32.max))"
        _ = try await Database.with(cluster.adminEndpoint, logger: Self.logger, maximumConnections: 1, migrate: false) {
            database in
            try await database.client.query(
                "CREATE DATABASE \(unescaped: name) OWNER \(unescaped: EmbeddedCluster.username)")
        }
        var endpoint = cluster.endpoint
        endpoint.database = name
        return endpoint
    }

    /// A fresh database's URL, for commands that take `--database` or ORCHESTRATE_DATABASE_URL.
    package func makeDatabaseURL() async throws -> String {
        try await makeDatabase().description
    }

    private func cluster() async throws -> EmbeddedCluster {
        if let started { return try await started.value.0 }
        let task = Task { try await Self.start() }
        started = task
        return try await task.value.0
    }

    private static func start() async throws -> (EmbeddedCluster, SupervisedProcess) {
        // A whole test run's cluster holds hundreds of databases: removing one left behind takes a while on a busy
        // disk, and nothing waits for it (on a pool thread it held every test back until it was done).
        Thread.detachNewThread { removeStaleClusters() }
        let root = "/tmp/orch-test-\(getpid())-\(UInt16.random(in: 0...UInt16.max))"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        chmod(root, 0o755)
        let cluster = EmbeddedCluster(root: root)
        try await cluster.prepare(logger: logger)
        // Tests need no durability: without fsync the hundreds of databases a test run makes and migrates do not queue
        // behind the disk (a shared, busy one can take a second per fsync), and neither does anything else on it.
        var server = try cluster.foregroundServer()
        server.arguments += ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]
        // Every test has a database and pools of its own, and many orchestrate processes beside: more clients than one
        // project's cluster needs, all at once on a busy machine.
        server.arguments += ["-c", "max_connections=600"]
        let process = try SupervisedProcess.launch(server)
        // Ready when it answers on the socket.
        try await Database.with(
            cluster.adminEndpoint, logger: logger, maximumConnections: 1, connectTimeout: .seconds(60), migrate: false
        ) { _ in }
        try await cluster.provision(logger: logger)
        return (cluster, process)
    }

    /// Folders of test clusters whose test process is gone.
    private static func removeStaleClusters() {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/tmp")) ?? []
        for entry in entries where entry.hasPrefix("orch-test-") {
            let parts = entry.split(separator: "-")
            guard parts.count >= 3, let pid = Int32(parts[2]), pid != getpid() else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH {
                try? FileManager.default.removeItem(atPath: EmbeddedCluster(root: "/tmp/\(entry)").socketDirectory)
                try? FileManager.default.removeItem(atPath: "/tmp/\(entry)")
            }
        }
    }

    static var logger: Logger {
        var logger = Logger(label: "orchestrate.tests")
        logger.logLevel = .error
        return logger
    }
}

/// Runs `body` with a migrated, private database, through at most `maximumConnections` of its own.
package func withTestDatabase<R: Sendable>(
    maximumConnections: Int = 20, _ body: @Sendable (Database) async throws -> R
) async throws -> R {
    let endpoint = try await TestPostgres.shared.makeDatabase()
    return try await Database.with(
        endpoint, logger: TestPostgres.logger, maximumConnections: maximumConnections, body)
}

/// A run of one scenario whose attempt is running: what exchanges and steps need to belong to.
package func makeRunningAttempt(in database: Database, scenario: String = "scenario") async throws -> Int64 {
    try await RunStore(database: database).createRunning(
        RunPlan(
            host: "test", gitRevision: nil, workingDirectory: "/tmp", configPath: nil, mode: .record, workers: 1,
            retries: 0,
            scenarios: [Scenario(id: scenario, name: scenario, command: "true", timeoutMilliseconds: 1000)]
        ))
}

/// The rows of one query (its text made of constants only) on the database at `url`, as a test reads what a
/// run left there.
package func queryRows<each T: PostgresDecodable & Sendable>(
    _ url: String, _ sql: String, as: (repeat each T).Type
) async throws -> [(repeat each T)] {
    try await Database.with(try DatabaseEndpoint(url: url), logger: Logger(label: "test"), maximumConnections: 1) {
        database in
        var rows: [(repeat each T)] = []
        let query = try await database.client.query(PostgresQuery(unsafeSQL: sql), logger: Logger(label: "test"))
        for try await row in query.decode((repeat each T).self) { rows.append(row) }
        return rows
    }
}
