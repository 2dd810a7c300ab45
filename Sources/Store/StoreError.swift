import OrchestrateModel

/// A failure of the store, with what a user needs to act on it and nothing secret.
package struct StoreError: CodedError {
    package typealias Code = ErrorCode<StoreError>

    package let code: Code
    package let message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}

extension ErrorCode where Domain == StoreError {
    /// The PostgreSQL server programs are not on this machine.
    package static let postgresNotInstalled = Self("postgresNotInstalled")
    /// The embedded cluster could not be created or started.
    package static let clusterFailed = Self("clusterFailed")
    /// The database did not answer after retries.
    package static let unreachable = Self("unreachable")
    /// A database URL or PG* setting that cannot be used.
    package static let badConfiguration = Self("badConfiguration")
    /// A run id that is not in the database.
    package static let unknownRun = Self("unknownRun")
    /// A path the embedded cluster would use is taken by something that is not its own (a planted link or folder).
    package static let unsafePath = Self("unsafePath")
    /// A migration failed; the schema is unchanged.
    package static let migrationFailed = Self("migrationFailed")
    /// A query's result lacks a column the code reads (a query and its reader out of step).
    package static let missingColumn = Self("missingColumn")
    /// A file could not be written on this host (a full disk, say).
    package static let cannotWrite = Self("cannotWrite")
    /// Network log rows (in memory or a spool file) that cannot be read back: a row without its fields.
    package static let unreadableRows = Self("unreadableRows")
}
