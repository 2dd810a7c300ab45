import Foundation
import Logging
import Store

/// `orchestrate db status|stop|url|migrate`.
package enum DatabaseCommands {
    package enum Action: String, Sendable, CaseIterable {
        case status, stop, url, migrate, expose
    }

    /// - Parameter listen: for `expose`, the address other hosts reach this one by.
    package static func perform(
        _ action: Action, configPath: String, database: String?, listen: String? = nil, logger: Logger
    ) async throws -> String {
        let config = try ConfigLoader.load(path: configPath, required: false)
        let selection = try DatabaseSelection.resolve(
            flag: database, configured: config.database, projectDirectory: config.directory)
        switch action {
        case .url:
            return selection.endpoint.description
        case .expose:
            guard let cluster = selection.cluster else {
                throw UsageError(
                    .notApplicable,
                    "the database comes from \(selection.source.rawValue), not the embedded cluster; only the embedded one can be exposed"
                )
            }
            guard let listen else {
                throw UsageError(
                    .missingValue,
                    "db expose needs --listen ADDRESS: the IP address or host name other hosts reach this one by")
            }
            let endpoint = try await cluster.openToNetwork(address: listen, logger: logger)
            var shared = endpoint
            shared.passwordFile = nil
            return """
                the embedded PostgreSQL listens on \(listen):\(EmbeddedCluster.port) too (TLS, SCRAM; only the role \(EmbeddedCluster.username))
                URL for the other hosts: \(shared)
                CA certificate to copy to them (sslrootcert): \(cluster.certificateAuthorityFile)
                password: in \(cluster.passwordFile) (libpq password file; give it to the other hosts as PGPASSWORD or as their \
                PGPASSFILE — orchestrate never prints it)
                """

        case .stop:
            guard let cluster = selection.cluster else {
                throw UsageError(
                    .notApplicable,
                    "the database comes from \(selection.source.rawValue), not the embedded cluster; orchestrate only stops its own"
                )
            }
            return try await cluster.stop(logger: logger)
                ? "stopped the embedded PostgreSQL (\(cluster.dataDirectory))"
                : "the embedded PostgreSQL was not running"
        case .migrate:
            let version = try await ProjectDatabase.open(selection, logger: logger, maximumConnections: 1) { database in
                try await database.schemaVersion()
            }
            return "schema at version \(version) (\(selection.endpoint))"
        case .status:
            var lines = ["database: \(selection.endpoint) (from \(selection.source.rawValue))"]
            if let cluster = selection.cluster {
                let running = await cluster.isRunning()
                lines.append(
                    "embedded cluster: \(running ? "running" : cluster.isInitialized ? "stopped" : "not created yet")")
                lines.append("data: \(cluster.dataDirectory)")
                lines.append("socket: \(cluster.socketPath)")
                guard running else { return lines.joined(separator: "\n") }
            }
            do {
                let (version, runs) = try await Database.with(
                    selection.endpoint, logger: logger, maximumConnections: 1, connectTimeout: .seconds(3),
                    migrate: false
                ) { database in
                    (try await database.schemaVersion(), try await database.runCount())
                }
                lines.append("schema version: \(version)")
                lines.append("runs: \(runs)")
            } catch {
                lines.append("unreachable: \(error)")
            }
            return lines.joined(separator: "\n")
        }
    }
}
