import Logging
import NIOCore
import PostgresNIO

/// A connection pool to the orchestrate database, with the schema migrated.
///
/// ```swift
/// try await Database.with(endpoint, logger: logger) { database in
///     let queue = AttemptQueue(database: database)
/// }
/// ```
public final class Database: Sendable {
    public let client: PostgresClient
    public let endpoint: DatabaseEndpoint
    let logger: Logger

    init(client: PostgresClient, endpoint: DatabaseEndpoint, logger: Logger) {
        self.client = client
        self.endpoint = endpoint
        self.logger = logger
    }

    /// Connects (retrying while the server starts up), migrates, runs `body`, and closes the pool.
    /// - Parameters:
    ///   - connectTimeout: how long to keep retrying an unreachable server before ``StoreError/Code/unreachable``.
    public static func with<R: Sendable>(
        _ endpoint: DatabaseEndpoint,
        logger: Logger,
        maximumConnections: Int = 20,
        connectTimeout: Duration = .seconds(15),
        migrate: Bool = true,
        _ body: @Sendable (Database) async throws -> R
    ) async throws -> R {
        // Queries log through a quieter logger: their failures are thrown (and the pool warns about
        // being used a moment before its run loop is scheduled, which is harmless).
        var logger = logger
        if logger.logLevel > .debug { logger.logLevel = .error }
        let client = PostgresClient(configuration: configuration(endpoint, maximumConnections: maximumConnections), backgroundLogger: logger)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            let database = Database(client: client, endpoint: endpoint, logger: logger)
            try await database.waitUntilReachable(timeout: connectTimeout)
            if migrate { try await Migrations.apply(on: database) }
            return try await body(database)
        }
    }

    static func configuration(_ endpoint: DatabaseEndpoint, maximumConnections: Int) -> PostgresClient.Configuration {
        var configuration: PostgresClient.Configuration
        switch endpoint.address {
        case .tcp(let host, let port):
            configuration = .init(host: host, port: port, username: endpoint.username, password: endpoint.password,
                                  database: endpoint.database, tls: endpoint.requireTLS ? .require(.makeClientConfiguration()) : .disable)
        case .unixSocket(let path):
            configuration = .init(unixSocketPath: path, username: endpoint.username, password: endpoint.password, database: endpoint.database)
        }
        configuration.options.maximumConnections = maximumConnections
        configuration.options.connectTimeout = .seconds(5)
        return configuration
    }

    private func waitUntilReachable(timeout: Duration) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        var delay = Duration.milliseconds(50)
        while true {
            do {
                try await client.query("SELECT 1", logger: logger)
                return
            } catch {
                if clock.now + delay > deadline {
                    throw StoreError(.unreachable, "database \(endpoint) unreachable: \(Self.describe(error))")
                }
                try await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(1))
            }
        }
    }

    /// A one-line description of a database error, without the query's bound values.
    public static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] { return message }
            if let underlying = error.underlying { return "\(error.code): \(underlying)" }
            return "\(error.code)"
        }
        return "\(error)"
    }
}
