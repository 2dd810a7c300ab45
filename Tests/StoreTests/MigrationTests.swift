import Foundation
import Logging
import OrchestrateTesting
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
                    try await Database.with(endpoint, logger: .init(label: "test"), maximumConnections: 1) { try await $0.schemaVersion() }
                }
            }
            for try await version in group { #expect(version == 12) }
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
        let verified = try DatabaseEndpoint(url: "postgres://ci@[fd00::5]:5432/runs?sslmode=verify-full&sslrootcert=/etc/ca.pem")
        #expect(verified.address == .tcp(host: "fd00::5", port: 5432))
        #expect(verified.tls == .verifyFull && verified.rootCertificate == "/etc/ca.pem")
        #expect(verified.description == "postgresql://ci@[fd00::5]:5432/runs?sslmode=verify-full&sslrootcert=/etc/ca.pem")
        #expect(try DatabaseEndpoint(url: "postgres://ci@h/db").tls == .prefer)
        #expect(throws: StoreError.self) { try DatabaseEndpoint(url: "postgres://ci@h/db?sslmode=verify-everything") }
        // Without a password in the URL or a password file, PGPASSWORD is used, and still never printed.
        #expect(verified.resolvedPassword(environment: ["PGPASSWORD": "from-env"]) == "from-env")
        #expect(!verified.description.contains("from-env"))
    }
}
