import Foundation
import OrchestrateTesting
import ProcessSupervisor
import Store
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// pgbouncer (Debian's) in transaction mode between orchestrate and PostgreSQL: the way many hosts share one database
/// (docs/sizing.md). It hands each transaction to any of its few server connections and refuses settings it does not
/// know when a client connects.
@Suite("Through pgbouncer in transaction mode", .timeLimit(.minutes(3)))
struct PoolerTests {
    static let pgbouncer = ["/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    @Test(
        "with pool_mode=transaction two runs pass through one server connection; without it, one error says what to add"
    )
    func transactionMode() async throws {
        guard let pgbouncer = Self.pgbouncer else {
            // scripts/install-deps.sh test installs it; CI never skips.
            #expect(ProcessInfo.processInfo.environment["CI"] != "true", "pgbouncer is not installed")
            return
        }
        let endpoint = try await TestPostgres.shared.makeDatabase()
        guard case .unixSocket(let socket) = endpoint.address else {
            Issue.record("the test cluster listens on \(endpoint.address)")
            return
        }
        try await TemporaryDirectory.with { directory in
            // pgbouncer refuses root: as root it runs as the test cluster's user, in a folder of its own.
            let folder = directory.file("pgbouncer")
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            var user: (uid: UInt32, gid: UInt32)?
            if geteuid() == 0, let entry = getpwnam("postgres") {
                user = (entry.pointee.pw_uid, entry.pointee.pw_gid)
                chown(folder, entry.pointee.pw_uid, entry.pointee.pw_gid)
            }
            let password = try #require(endpoint.resolvedPassword())
            try directory.write(
                "pgbouncer/pgbouncer.ini",
                """
                [databases]
                \(endpoint.database) = host=\((socket as NSString).deletingLastPathComponent) port=5432 dbname=\(endpoint.database) user=\(endpoint.username) password=\(password)
                [pgbouncer]
                listen_addr =
                unix_socket_dir = \(folder)
                listen_port = 6432
                auth_type = any
                pool_mode = transaction
                default_pool_size = 1
                max_client_conn = 200
                logfile = \(folder)/pgbouncer.log
                pidfile = \(folder)/pgbouncer.pid
                """)
            if let user { chown(directory.file("pgbouncer/pgbouncer.ini"), user.uid, user.gid) }
            var command = SupervisedCommand(
                executable: pgbouncer, arguments: ["\(folder)/pgbouncer.ini"],
                environment: ProcessInfo.processInfo.environment, stdoutPath: "\(folder)/out",
                stderrPath: "\(folder)/err")
            command.user = user
            let bouncer = try SupervisedProcess.launch(command)
            defer { bouncer.terminate() }
            #expect(
                await eventually(timeout: .seconds(20)) {
                    FileManager.default.fileExists(atPath: "\(folder)/.s.PGSQL.6432")
                }, "\(directory.read("pgbouncer/err"))\(directory.read("pgbouncer/pgbouncer.log"))")

            // Two runs at once, through pgbouncer's one server connection: a statement prepared by one client would
            // exist there already for the other.
            let scenarios = (1...24).map { "    - { id: s\($0), command: \"true\" }" }
            let url = "postgresql://\(endpoint.username)@/\(endpoint.database)?host=\(folder)&port=6432"
            var runs: [(OrchestrateCLI, SupervisedProcess)] = []
            for name in ["a", "b"] {
                try directory.write(
                    "\(name)/orchestrate.yml",
                    """
                    project: \(name)
                    workers: 6
                    suite:
                      scenarios:
                    \(scenarios.joined(separator: "\n"))
                    mock: { mode: live }
                    """)
                let cli = OrchestrateCLI(directory: directory.file(name), database: url + "&pool_mode=transaction")
                runs.append((cli, try cli.launch(["run", "--progress", "none"], name: "run")))
            }
            for (cli, process) in runs {
                let run = cli.output(await process.wait(), name: "run")
                #expect(run.exitCode == 0, "\(run.stdout)\(run.stderr)")
                #expect(run.stdout.contains("24 scenarios, 24 passed"), "\(run.stdout)\(run.stderr)")
                // No statement failed on the way (the queue retries one that does).
                #expect(!run.stderr.contains("retrying"), "\(run.stderr)")
            }

            let plain = OrchestrateCLI(directory: directory.file("a"), database: url)
            let refused = try await plain.run(["runs"])
            #expect(refused.exitCode == 3, "\(refused.stdout)\(refused.stderr)")
            #expect(refused.stderr.contains("pool_mode=transaction"), "\(refused.stderr)")
        }
    }
}
