import PostgresNIO

extension Database {
    /// The newest applied migration, 0 for an empty database.
    package func schemaVersion() async throws -> Int {
        let exists = try await client.query("SELECT to_regclass('schema_migrations') IS NOT NULL", logger: logger)
        for try await present in exists.decode(Bool.self) where !present { return 0 }
        let rows = try await client.query("SELECT coalesce(max(version), 0) FROM schema_migrations", logger: logger)
        for try await version in rows.decode(Int.self) { return version }
        return 0
    }

    /// Applies the migrations up to `version`: for tests that make rows as an older orchestrate left them.
    package func migrate(through version: Int) async throws {
        try await Migrations.apply(on: self, through: version)
    }

    /// How many runs are stored (0 before the schema exists).
    package func runCount() async throws -> Int {
        guard try await schemaVersion() > 0 else { return 0 }
        let rows = try await client.query("SELECT count(*) FROM runs", logger: logger)
        for try await count in rows.decode(Int.self) { return count }
        return 0
    }
}
