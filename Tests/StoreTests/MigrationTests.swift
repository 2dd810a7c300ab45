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
            for try await version in group { #expect(version == 11) }
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
    }
}
