/// A failure of the store, with what a user needs to act on it and nothing secret.
public struct StoreError: Error, CustomStringConvertible, Sendable {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private let name: String
        /// The PostgreSQL server programs are not on this machine.
        public static let postgresNotInstalled = Code(name: "postgresNotInstalled")
        /// The embedded cluster could not be created or started.
        public static let clusterFailed = Code(name: "clusterFailed")
        /// The database did not answer after retries.
        public static let unreachable = Code(name: "unreachable")
        /// A database URL or PG* setting that cannot be used.
        public static let badConfiguration = Code(name: "badConfiguration")
        /// A run id that is not in the database.
        public static let unknownRun = Code(name: "unknownRun")
        /// A migration failed; the schema is unchanged.
        public static let migrationFailed = Code(name: "migrationFailed")
        public var description: String { name }
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
