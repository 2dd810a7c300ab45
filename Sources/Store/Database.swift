import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import OrchestrateModel
import PostgresNIO

/// A connection pool to the orchestrate database, with the schema migrated.
///
/// ```swift
/// try await Database.with(endpoint, logger: logger) { database in
///     let queue = AttemptQueue(database: database)
/// }
/// ```
package final class Database: Sendable {
    package let client: PostgresClient
    package let endpoint: DatabaseEndpoint
    package let logger: Logger

    /// 15 s, or ORCHESTRATE_CONNECT_TIMEOUT (e.g. `2s`, in seconds when a bare number).
    package static var defaultConnectTimeout: Duration {
        let text = ProcessInfo.processInfo.environment["ORCHESTRATE_CONNECT_TIMEOUT"] ?? ""
        let seconds = Double(text.hasSuffix("s") ? String(text.dropLast()) : text) ?? 15
        return .milliseconds(Int64(seconds * 1000))
    }

    init(client: PostgresClient, endpoint: DatabaseEndpoint, logger: Logger) {
        self.client = client
        self.endpoint = endpoint
        self.logger = logger
    }

    /// Connects (retrying while the server starts up), migrates, runs `body`, and closes the pool.
    /// - Parameters:
    ///   - connectTimeout: how long to keep retrying an unreachable server before ``StoreError/Code/unreachable``.
    package static func with<R: Sendable>(
        _ endpoint: DatabaseEndpoint,
        logger: Logger,
        maximumConnections: Int = 20,
        connectTimeout: Duration = defaultConnectTimeout,
        migrate: Bool = true,
        _ body: @Sendable (Database) async throws -> R
    ) async throws -> R {
        // Queries log through a quieter logger: their failures are thrown (and the pool warns about
        // being used a moment before its run loop is scheduled, which is harmless).
        var logger = logger
        if logger.logLevel > .debug { logger.logLevel = .error }
        let client = PostgresClient(
            configuration: configuration(endpoint, maximumConnections: maximumConnections), eventLoopGroup: eventLoops,
            backgroundLogger: logger
        )
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            let database = Database(client: client, endpoint: endpoint, logger: logger)
            // The pool's first connection usually answers at once, and the schema check is then the reachability
            // check too (one connection instead of two). Otherwise — a server still starting, or none — a direct
            // connection retries until the timeout and says why.
            var version = await database.schemaVersion(within: .seconds(1))
            if version == nil {
                try await database.waitUntilReachable(timeout: connectTimeout)
                version = try await database.schemaVersion()
            }
            if migrate, let version, version < Migrations.latest { try await Migrations.apply(on: database) }
            return try await body(database)
        }
    }

    /// The database's own event loops, apart from NIO's shared ones that serve the mock servers' connections: sending a
    /// batch of network log rows holds up no request. Two: a connection's handshake (SCRAM's thousands of rounds) on
    /// one never holds up every other connection's queries — a process with many pools (the tests) has many handshakes.
    static let eventLoops = MultiThreadedEventLoopGroup(numberOfThreads: 2)

    /// Runs the network log's writer on the database's event loop instead of the cooperative pool, where
    /// a busy mock server queues its requests: each await of a batch write would wait behind them.
    static let executor = EventLoopTaskExecutor(eventLoops.next())

    static func configuration(_ endpoint: DatabaseEndpoint, maximumConnections: Int) -> PostgresClient.Configuration {
        var configuration: PostgresClient.Configuration
        switch endpoint.address {
        case .tcp(let host, let port):
            configuration = .init(
                host: host, port: port, username: endpoint.username, password: endpoint.resolvedPassword(),
                database: endpoint.database, tls: clientTLS(endpoint))
        case .unixSocket(let path):
            configuration = .init(
                unixSocketPath: path, username: endpoint.username, password: endpoint.resolvedPassword(),
                database: endpoint.database)
        }
        configuration.options.maximumConnections = maximumConnections
        configuration.options.connectTimeout = .seconds(5)
        // The queue's prepared statements run thousands of times per run with plans that do not depend on
        // their parameters: plan them once per connection instead of re-planning each execution. Every
        // statement is short: compiling one with JIT costs more than it can save.
        configuration.options.additionalStartupParameters =
            endpoint.transactionPooled
            ? []
            : [
                ("plan_cache_mode", "force_generic_plan"), ("jit", "off"),
                // A result, a claim or a logged exchange acknowledged is one a crash of the server does not lose,
                // whatever the server's own default (through a pooler, the server's default must be on: sizing.md).
                ("synchronous_commit", "on"),
            ]
        return configuration
    }

    /// TLS as the endpoint's `sslmode` asks: `prefer` and `require` do not check the certificate (as libpq),
    /// `verify-ca` checks its signature against `sslrootcert` (else the system's CAs), `verify-full` also the host
    /// name.
    static func clientTLS(_ endpoint: DatabaseEndpoint) -> PostgresClient.Configuration.TLS {
        switch tlsConfiguration(endpoint) {
        case nil: .disable
        case (let configuration, false)?: .prefer(configuration)
        case (let configuration, true)?: .require(configuration)
        }
    }

    /// The TLS configuration for the endpoint and whether TLS is required; `nil` without TLS.
    private static func tlsConfiguration(_ endpoint: DatabaseEndpoint) -> (TLSConfiguration, required: Bool)? {
        var tls = TLSConfiguration.makeClientConfiguration()
        switch endpoint.tls {
        case .disable: return nil
        case .prefer, .require: tls.certificateVerification = .none
        case .verifyCA: tls.certificateVerification = .noHostnameVerification
        case .verifyFull: tls.certificateVerification = .fullVerification
        }
        if let root = endpoint.rootCertificate { tls.trustRoots = .file(root) }
        return (tls, endpoint.tls != .prefer)
    }

    /// The schema version, or `nil` when the pool has no connection within `timeout` (its lease requests wait
    /// without an error).
    private func schemaVersion(within timeout: Duration) async -> Int? {
        await withThrowingTaskGroup(of: Int?.self) { group in
            group.addTask { try await self.schemaVersion() }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            do {
                return try await group.next() ?? nil
            } catch {
                return nil
            }
        }
    }

    /// Connects directly (not through the pool, whose lease requests wait without an error) until the
    /// server answers, so that an unreachable database fails in `timeout` with the reason.
    private func waitUntilReachable(timeout: Duration) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        var delay = Duration.milliseconds(50)
        var configuration: PostgresConnection.Configuration
        switch endpoint.address {
        case .tcp(let host, let port):
            let tls: PostgresConnection.Configuration.TLS =
                switch Self.tlsConfiguration(endpoint) {
                case nil: .disable
                case (let configuration, false)?: .prefer(try .init(configuration: configuration))
                case (let configuration, true)?: .require(try .init(configuration: configuration))
                }
            configuration = .init(
                host: host, port: port, username: endpoint.username, password: endpoint.resolvedPassword(),
                database: endpoint.database, tls: tls)
        case .unixSocket(let path):
            configuration = .init(
                unixSocketPath: path, username: endpoint.username, password: endpoint.resolvedPassword(),
                database: endpoint.database)
        }
        configuration.options.connectTimeout = .seconds(5)
        // As the pool connects: a pooler that refuses its settings refuses this connection too.
        configuration.options.additionalStartupParameters =
            Self.configuration(endpoint, maximumConnections: 1).options.additionalStartupParameters
        while true {
            do {
                let connection = try await PostgresConnection.connect(
                    on: PostgresClient.defaultEventLoopGroup.next(), configuration: configuration, id: 0, logger: logger
                ).get()
                try? await connection.close()
                return
            } catch {
                // A server that answered with a refusal (a setting or a password it does not take, no such database)
                // says the same next time; one starting up or full of connections may not.
                let refused = Self.refusedForGood(error)
                if refused || clock.now + delay > deadline {
                    throw StoreError(.unreachable, "database \(endpoint) unreachable: \(Self.describe(error))")
                }
                try await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(1))
            }
        }
    }

    /// `body` in a transaction on a connection of the pool, committed before this returns (rolled back when `body`
    /// throws). Unlike postgres-nio's own `withTransaction`, it never waits on a connection that closed: postgres-nio
    /// drops a statement written to a connection whose channel is already torn down, without an answer — the ROLLBACK
    /// after a statement the dying server failed, or a BEGIN on a connection the pool leased as it closed — so BEGIN,
    /// COMMIT and ROLLBACK are given up on once the connection is closed, and the call throws. They are never given up
    /// on for the caller's sake (a caller cancelled, or out of patience): a connection goes back to the pool outside a
    /// transaction, or closed when its transaction's end was not answered.
    package func withTransaction<Result: Sendable>(
        _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try await client.withConnection { connection in
            try await ending(connection, "BEGIN")
            let value: Result
            do {
                value = try await body(connection)
            } catch {
                try? await ending(connection, "ROLLBACK")
                throw error
            }
            try await ending(connection, "COMMIT")
            return value
        }
    }

    /// `command` on `connection`, run to its end whatever happens to the caller, or ``ConnectionClosed`` once the
    /// connection is closed (checked every 20 ms). When it fails, the connection is closed: a session whose
    /// transaction may still be open never serves another caller.
    private func ending(_ connection: PostgresConnection, _ command: String) async throws {
        let logger = logger
        do {
            try await Task {
                try await abandoning(
                    when: {
                        while !connection.isClosed {
                            guard (try? await Task.sleep(for: .milliseconds(20))) != nil else { return nil }
                        }
                        return ConnectionClosed(command: command)
                    },
                    { _ = try await connection.query(PostgresQuery(unsafeSQL: command), logger: logger) })
            }.value
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// The rows of `statement`, prepared once per connection — or, through a pooler in transaction mode (whose server
    /// connections change from one transaction to the next), sent whole each time.
    package func rows<Statement: PostgresPreparedStatement>(
        of statement: Statement, on connection: PostgresConnection? = nil
    ) async throws -> [Statement.Row] where Statement.Row: Sendable {
        var rows: [Statement.Row] = []
        if endpoint.transactionPooled {
            let query = PostgresQuery(unsafeSQL: Statement.sql, binds: try statement.makeBindings())
            for try await row in try await self.query(query, on: connection) {
                rows.append(try statement.decodeRow(row))
            }
        } else if let connection {
            for try await row in try await connection.execute(statement, logger: logger) { rows.append(row) }
        } else {
            for try await row in try await client.execute(statement, logger: logger) { rows.append(row) }
        }
        return rows
    }

    /// `query`'s rows, on `connection` (in its transaction) when given, else on a connection of the pool.
    package func query(_ query: PostgresQuery, on connection: PostgresConnection?) async throws -> PostgresRowSequence {
        if let connection { return try await connection.query(query, logger: logger) }
        return try await client.query(query, logger: logger)
    }

    /// Whether a connection was refused for good: a password or role refused, no such database, or a setting a pooler
    /// does not take (pgbouncer says 08P01 for that, and for passing troubles too: too many clients, shutting down).
    static func refusedForGood(_ error: any Error) -> Bool {
        guard let info = (error as? PSQLError)?.serverInfo, let state = info[.sqlState] else { return false }
        if state == "08P01" { return info[.message]?.hasPrefix("unsupported startup parameter") ?? false }
        return ["28P01", "28000", "3D000"].contains(state)
    }

    /// A one-line description of a database error, without the query's bound values.
    package static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] {
                guard message.hasPrefix("unsupported startup parameter") else { return message }
                return message
                    + " (a pooler in transaction mode, such as pgbouncer's, takes pool_mode=transaction in the database URL)"
            }
            if let underlying = error.underlying { return "\(error.code): \(underlying)" }
            return "\(error.code)"
        }
        return "\(error)"
    }
}

/// A task executor that runs jobs on one NIO event loop.
final class EventLoopTaskExecutor: TaskExecutor {
    private let loop: any EventLoop

    init(_ loop: any EventLoop) {
        self.loop = loop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

/// A transaction's BEGIN, COMMIT or ROLLBACK given up on: its connection closed (the server went away).
package struct ConnectionClosed: Error, CustomStringConvertible {
    package var command: String
    package var description: String { "the connection closed before \(command) was answered" }
}
