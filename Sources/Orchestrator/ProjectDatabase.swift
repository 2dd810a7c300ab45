import Foundation
import Logging
import Store

/// Opens the database a project's commands use — `--database`, else ORCHESTRATE_DATABASE_URL, else orchestrate.yml's
/// `database`, else the PG* variables, else the embedded cluster, which is started first — connected, migrated, for the
/// length of `body`.
package enum ProjectDatabase {
    /// `creating: false` (the commands that only read history) never makes the embedded cluster: where there is none,
    /// there is no history to read, and the error says why (no config found, or no run yet).
    package static func open<R: Sendable>(
        flag: String?, config: OrchestrateConfig, logger: Logger, maximumConnections: Int = 20, creating: Bool = true,
        _ body: @Sendable (Database) async throws -> R
    ) async throws -> R {
        let selection = try DatabaseSelection.resolve(
            flag: flag, configured: config.database, projectDirectory: config.directory)
        if !creating, let cluster = selection.cluster, !cluster.isInitialized {
            throw UsageError(.notFound, noHistory(config))
        }
        return try await open(selection, logger: logger, maximumConnections: maximumConnections, body)
    }

    package static func open<R: Sendable>(
        _ selection: DatabaseSelection, logger: Logger, maximumConnections: Int = 20,
        _ body: @Sendable (Database) async throws -> R
    ) async throws -> R {
        do {
            if let cluster = selection.cluster, try await cluster.startDetached(logger: logger) {
                let ignore =
                    InitCommand.ignoresOwnFiles(in: selection.projectFolder) ? "" : "; add .orchestrate/ to .gitignore"
                Console.detached.note(
                    "made orchestrate's own PostgreSQL in \(cluster.dataDirectory); it keeps running for the next "
                        + "commands (orchestrate db stop stops it\(ignore))")
            }
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

    /// Why a command that reads history has none to read, when the embedded cluster was never made.
    static func noHistory(_ config: OrchestrateConfig) -> String {
        guard config.fromFile else {
            return
                "no \(ConfigLoader.fileName) in \(config.directory) or a folder above it, and no database to read: run "
                + "this in your project's folder, pass --config PATH or --database URL, or write a first config with "
                + "orchestrate init"
        }
        return "no history yet: \(config.path) has no runs (its database is made by the first orchestrate run)"
    }
}
