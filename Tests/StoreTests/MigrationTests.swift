import Foundation
import Logging
import OrchestrateTesting
import PostgresNIO
import Store
import Testing

@Suite("Migrations")
struct MigrationTests {
    @Test("migrations apply once, also when many processes connect at the same time")
    func concurrentMigration() async throws {
        let endpoint = try await TestPostgres.shared.makeDatabase()
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<6 {
                group.addTask {
                    try await Database.with(endpoint, logger: .init(label: "test"), maximumConnections: 1) {
                        try await $0.schemaVersion()
                    }
                }
            }
            for try await version in group { #expect(version == 34) }
        }
    }

    @Test("an unknown run id is a clear error")
    func unknownRun() async throws {
        _ = try await withTestDatabase { database in
            await #expect(throws: StoreError.self) { try await RunStore(database: database).report(.init()) }
        }
    }

    @Test("database URLs of both forms are understood and never print the password")
    func urls() throws {
        let tcp = try DatabaseEndpoint(url: "postgres://alice:s3cret@db.example:6543/ci?sslmode=require")
        #expect(tcp.address == .tcp(host: "db.example", port: 6543))
        #expect(tcp.username == "alice")
        #expect(tcp.password == "s3cret")
        #expect(tcp.database == "ci")
        #expect(tcp.requireTLS)
        #expect(!tcp.description.contains("s3cret"))
        let socket = try DatabaseEndpoint(url: "postgresql://bob@/orchestrate?host=/run/postgresql")
        #expect(socket.address == .unixSocket(path: "/run/postgresql/.s.PGSQL.5432"))
        #expect(throws: StoreError.self) { try DatabaseEndpoint(url: "mysql://x@y/z") }
        let verified = try DatabaseEndpoint(
            url: "postgres://ci@[fd00::5]:5432/runs?sslmode=verify-full&sslrootcert=/etc/ca.pem")
        #expect(verified.address == .tcp(host: "fd00::5", port: 5432))
        #expect(verified.tls == .verifyFull && verified.rootCertificate == "/etc/ca.pem")
        #expect(
            verified.description == "postgresql://ci@[fd00::5]:5432/runs?sslmode=verify-full&sslrootcert=/etc/ca.pem")
        #expect(try DatabaseEndpoint(url: "postgres://ci@h/db").tls == .prefer)
        #expect(throws: StoreError.self) { try DatabaseEndpoint(url: "postgres://ci@h/db?sslmode=verify-everything") }
        // Through a pooler in transaction mode: said in the URL, kept in its description.
        let pooled = try DatabaseEndpoint(url: "postgres://ci@pool:6432/db?pool_mode=transaction")
        #expect(pooled.transactionPooled && pooled.description.hasSuffix("?pool_mode=transaction"))
        #expect(try !DatabaseEndpoint(url: "postgres://ci@h/db?pool_mode=session").transactionPooled)
        #expect(throws: StoreError.self) { try DatabaseEndpoint(url: "postgres://ci@h/db?pool_mode=statement") }
        // Without a password in the URL or a password file, PGPASSWORD is used, and still never printed.
        #expect(verified.resolvedPassword(environment: ["PGPASSWORD": "from-env"]) == "from-env")
        #expect(!verified.description.contains("from-env"))
    }

    @Test("rows from before projects belong to their run's folder; a scenario two projects ran becomes one per project")
    func projectsMigration() async throws {
        let endpoint = try await TestPostgres.shared.makeDatabase()
        try await Database.with(endpoint, logger: .init(label: "test"), maximumConnections: 1, migrate: false) {
            database in
            try await database.migrate(through: 12)
            let shop = UUID(), blog = UUID()
            for statement: PostgresQuery in [
                """
                INSERT INTO runs (id, state, host, working_directory, mode, workers, retries, scenario_count)
                VALUES (\(shop), 'finished', 'ci', '/home/ci/shop', 'replay', 1, 0, 2), (\(blog), 'finished', 'ci', '/builds/team/blog/', 'replay', 1, 0, 1)
                """,
                "INSERT INTO scenarios (id, name) VALUES ('login', 'login'), ('cart', 'cart')",
                """
                INSERT INTO run_scenarios (run_id, scenario_id, position, command, timeout_ms, max_attempts)
                VALUES (\(shop), 'login', 0, 'true', 1000, 1), (\(shop), 'cart', 1, 'true', 1000, 1), (\(blog), 'login', 0, 'true', 1000, 1)
                """,
                """
                INSERT INTO attempts (run_id, scenario_id, attempt, state, outcome, duration_ms, finished_at)
                VALUES (\(shop), 'login', 1, 'finished', 'passed', 300, now()), (\(shop), 'cart', 1, 'finished', 'passed', 200, now()),
                       (\(blog), 'login', 1, 'finished', 'failed', 900, now())
                """,
                "INSERT INTO quarantine (scenario_id, reason, automatic) VALUES ('login', 'by hand', false)",
            ] {
                try await database.client.query(statement, logger: database.logger)
            }
            try await database.migrate(through: 13)
            func rows(_ sql: String) async throws -> [String] {
                var found: [String] = []
                for try await row in try await database.client.query(
                    PostgresQuery(unsafeSQL: sql), logger: database.logger
                ).decode(String.self) {
                    found.append(row)
                }
                return found
            }
            #expect(try await rows("SELECT project FROM runs ORDER BY project") == ["blog", "shop"])
            #expect(
                try await rows("SELECT project || '/' || id FROM scenarios ORDER BY 1") == [
                    "blog/login", "shop/cart", "shop/login",
                ])
            #expect(
                try await rows("SELECT project || '/' || scenario_id FROM quarantine ORDER BY 1") == [
                    "blog/login", "shop/login",
                ])
            #expect(
                try await rows(
                    "SELECT a.project || '/' || a.scenario_id || ' ' || a.outcome FROM attempts a ORDER BY 1")
                    == ["blog/login failed", "shop/cart passed", "shop/login passed"])
            let store = RunStore(database: database)
            #expect(try await store.expectedDurations(["login"], project: "shop") == ["login": 300])
            #expect(try await store.expectedDurations(["login"], project: "blog") == [:])
        }
    }
}
