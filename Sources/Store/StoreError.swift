/// A failure of the store, with what a user needs to act on it and nothing secret.
package struct StoreError: Error, CustomStringConvertible, Sendable {
    package struct Code: Sendable, Hashable, CustomStringConvertible {
        private let name: String
        /// The PostgreSQL server programs are not on this machine.
        package static let postgresNotInstalled = Code(name: "postgresNotInstalled")
        /// The embedded cluster could not be created or started.
        package static let clusterFailed = Code(name: "clusterFailed")
        /// The database did not answer after retries.
        package static let unreachable = Code(name: "unreachable")
        /// A database URL or PG* setting that cannot be used.
        package static let badConfiguration = Code(name: "badConfiguration")
        /// A run id that is not in the database.
        package static let unknownRun = Code(name: "unknownRun")
        /// A path the embedded cluster would use is taken by something that is not its own (a planted link or folder).
        package static let unsafePath = Code(name: "unsafePath")
        /// A migration failed; the schema is unchanged.
        package static let migrationFailed = Code(name: "migrationFailed")
        /// A query's result lacks a column the code reads (a query and its reader out of step).
        package static let missingColumn = Code(name: "missingColumn")
        package var description: String { name }
    }

    package let code: Code
    package let message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { message }
}
