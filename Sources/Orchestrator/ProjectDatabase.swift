import Logging
import Store

/// Opens the database a project's commands use — `--database`, else ORCHESTRATE_DATABASE_URL, else orchestrate.yml's
/// `database`, else the PG* variables, else the embedded cluster, which is started first — connected, migrated, for the
/// length of `body`.
package enum ProjectDatabase {
    package static func open<R: Sendable>(
        flag: String?, config: OrchestrateConfig, logger: Logger, maximumConnections: Int = 20,
        _ body: @Sendable (Database) async throws -> R
    ) async throws -> R {
        try await open(
            DatabaseSelection.resolve(flag: flag, configured: config.database, projectDirectory: config.directory),
            logger: logger, maximumConnections: maximumConnections, body)
    }

    package static func open<R: Sendable>(
        _ selection: DatabaseSelection, logger: Logger, maximumConnections: Int = 20,
        _ body: @Sendable (Database) async throws -> R
    ) async throws -> R {
        do {
            if let cluster = selection.cluster { try await cluster.startDetached(logger: logger) }
            return try await Database.with(
                selection.endpoint, logger: logger, maximumConnections: maximumConnections, body)
        } catch {
            // An infrastructure failure on a full disk (the embedded cluster's, or the spool's) names the disk.
            guard ExitStatus.code(for: error) == ExitStatus.infrastructure,
                let note = DiskSpace.fullNote(
                    forAny: (selection.cluster.map { [$0.dataDirectory] } ?? []) + [selection.projectFolder])
            else { throw error }
            throw RunError.diskFull(note, cause: error)
        }
    }
}
