import Foundation
import Logging
import OrchestrateTesting
import ProcessSupervisor
import Store
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What a run survives: docs/reliability.md names these tests.
@Suite("Reliability under hostile conditions", .timeLimit(.minutes(3)))
struct ReliabilityTests {
    @Test(
        "a slot whose supervisor is killed mid-run heals: every scenario passes once, no retry spent, nothing outlives it"
    )
    func supervisorKilled() async throws {
        try await TemporaryDirectory.with { directory in
            // The victim's first execution blocks, with a child in its group; later ones pass at once.
            try directory.write(
                "orchestrate.yml",
                """
                workers: 2
                retries: 0
                suite:
                  command: "true"
                  scenarios:
                    - id: victim
                      command: "echo $$ $PPID >> starts; if [ ! -f killed ]; then sleep 300 & echo $! > child; wait; fi"
                    - { id: a }
                    - { id: b }
                    - { id: c }
                    - { id: d }
                    - { id: e }
                """)
            let cli = OrchestrateCLI(
                directory: directory.path, database: try await TestPostgres.shared.makeDatabaseURL())
            let run = try cli.launch(["run", "--progress", "lines"], name: "run")
            let (shell, supervisor) = try #require(
                await eventuallyValue(timeout: .seconds(30)) { () -> (Int32, Int32)? in
                    let fields = directory.read("starts").split(separator: " ").compactMap {
                        Int32($0.trimmingCharacters(in: .whitespacesAndNewlines))
                    }
                    return fields.count == 2 ? (fields[0], fields[1]) : nil
                })
            let child = try #require(
                await eventuallyValue { Int32(directory.read("child").trimmingCharacters(in: .whitespacesAndNewlines)) }
            )
            try directory.write("killed", "")
            kill(supervisor, SIGKILL)
            let result = cli.output(await run.wait(), name: "run")
            #expect(result.exitCode == 0, "\(result.stdout)\(result.stderr)")
            #expect(result.stdout.contains("6 scenarios, 6 passed, 0 failed"), "\(result.stdout)")
            #expect(result.stderr.contains("supervisor process died running victim"), "\(result.stderr)")
            #expect(directory.read("starts").split(separator: "\n").count == 2, "the victim ran again, once")
            #expect(
                !processExists(shell) && !processExists(child), "the killed attempt's processes outlived its supervisor"
            )
            // One finished attempt per scenario, each the first (no retry spent); the lost execution is kept apart.
            let database = try #require(cli.environment["ORCHESTRATE_DATABASE_URL"])
            let rows = try await queryRows(
                database,
                "SELECT scenario_id, state, attempt, coalesce(outcome, '') FROM attempts ORDER BY scenario_id, id",
                as: (String, String, Int, String).self)
            #expect(rows.filter { $0.1 == "finished" }.count == 6)
            #expect(rows.allSatisfy { $0.2 == 1 && ($0.1 == "abandoned" || $0.3 == "passed") }, "\(rows)")
            #expect(rows.filter { $0.0 == "victim" }.map(\.1) == ["abandoned", "finished"], "\(rows)")
        }
    }
}

/// A PostgreSQL server of the test's own, that the test may kill: a private cluster in the foreground.
final class KillableDatabase: Sendable {
    let cluster: EmbeddedCluster
    let server: Mutex<SupervisedProcess?>

    init() async throws {
        cluster = EmbeddedCluster(root: "/tmp/orch-kill-\(UUID().uuidString.prefix(8).lowercased())")
        try FileManager.default.createDirectory(atPath: cluster.root, withIntermediateDirectories: true)
        chmod(cluster.root, 0o755)
        var logger = Logger(label: "test")
        logger.logLevel = .error
        try await cluster.prepare(logger: logger)
        server = Mutex(nil)
        try await start()
        try await cluster.provision(logger: logger)
    }

    var url: String { cluster.endpoint.description }

    /// Starts the server (again) and waits until it answers.
    func start() async throws {
        let process = try SupervisedProcess.launch(try cluster.foregroundServer())
        server.withLock { $0 = process }
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        try await Database.with(
            cluster.adminEndpoint, logger: logger, maximumConnections: 1, connectTimeout: .seconds(60), migrate: false
        ) { _ in }
    }

    /// SIGKILL of the postmaster, as a crash; returns when it is gone.
    func crash() async {
        guard let process = server.withLock({ $0 }), let pid = process.pid else { return }
        kill(pid, SIGKILL)
        _ = await process.wait()
    }

    /// Stops the server and removes its folders.
    func remove() async {
        if let process = server.withLock({ $0 }) {
            process.terminate()
            _ = await process.wait()
        }
        try? FileManager.default.removeItem(atPath: cluster.socketDirectory)
        try? FileManager.default.removeItem(atPath: cluster.root)
    }

    static func with(_ body: (KillableDatabase) async throws -> Void) async throws {
        let database = try await KillableDatabase()
        do {
            try await body(database)
            await database.remove()
        } catch {
            await database.remove()
            throw error
        }
    }
}

@Suite("A database that crashes", .timeLimit(.minutes(3)))
struct DatabaseCrashTests {
    /// 40 scenarios of 6 requests each through the mock server to a counting upstream, live; each counts its
    /// executions.
    static func writeSuite(_ directory: TemporaryDirectory, upstream: TestUpstream) throws {
        let scenarios = (1...40).map { "    - { id: s\($0) }" }.joined(separator: "\n")
        try directory.write(
            "orchestrate.yml",
            """
            workers: 4
            suite:
              command: "echo x >> runs-{id}; for i in 1 2 3 4 5 6; do curl -sf \\"$ORCHESTRATE_MOCK_URL/api.test/ping?s={id}&i=$i\\" > /dev/null || exit 1; sleep 0.1; done; echo x >> ends-{id}"
              scenarios:
            \(scenarios)
            mock:
              mode: live
              hosts: { api.test: "\(upstream.url)" }
            """)
    }

    /// A private cluster that can be crashed, a counting upstream and the suite in a folder, with the CLI pointed at
    /// them.
    static func withSuite(
        _ body: (KillableDatabase, TestUpstream, TemporaryDirectory, OrchestrateCLI) async throws -> Void
    ) async throws {
        try await KillableDatabase.with { database in
            try await TestUpstream.with { upstream in
                try await TemporaryDirectory.with { directory in
                    try writeSuite(directory, upstream: upstream)
                    try await body(
                        database, upstream, directory, OrchestrateCLI(directory: directory.path, database: database.url)
                    )
                }
            }
        }
    }

    @Test(
        "SIGKILL of the postmaster mid-run, restarted 3 s later: no scenario runs twice, no exchange is lost or doubled"
    )
    func crashAndRestart() async throws {
        try await Self.withSuite { database, upstream, directory, cli in
            // On a loaded machine the server's crash recovery and the pool's reconnection may take a while: the
            // patience is long here, since what is checked is that nothing is lost or doubled.
            var cli = cli
            cli.environment["ORCHESTRATE_CONNECT_TIMEOUT"] = "60s"
            let run = try cli.launch(["run", "--progress", "lines"], name: "run")
            let started = await eventually(timeout: .seconds(60)) {
                ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter {
                    $0.hasPrefix("runs-")
                }.count >= 8
            }
            #expect(started)
            await database.crash()
            // The outage lasts 3 s: the server comes back on that schedule.
            try await paced(every: .seconds(3), times: 2) { index in if index == 1 { try await database.start() } }
            let result = cli.output(await run.wait(), name: "run")
            #expect(result.exitCode == 0, "\(result.stdout)\(result.stderr)")
            #expect(result.stdout.contains("40 scenarios, 40 passed, 0 failed"), "\(result.stdout)")
            for index in 1...40 {
                #expect(
                    directory.read("runs-s\(index)") == "x\n",
                    "s\(index) ran \(directory.read("runs-s\(index)").count / 2) times")
            }
            let hits = upstream.hits.withLock { $0 }
            #expect(hits == 240)
            let counts = try await queryRows(
                database.url,
                """
                SELECT (SELECT count(*) FROM exchanges), (SELECT count(DISTINCT (attempt_id, sequence)) FROM exchanges),
                       (SELECT count(*) FROM attempts WHERE state = 'finished' AND outcome = 'passed'),
                       (SELECT count(DISTINCT scenario_id) FROM attempts WHERE state = 'finished')
                """, as: (Int64, Int64, Int64, Int64).self)
            #expect(
                counts.first.map { [$0.0, $0.1, $0.2, $0.3] } == [Int64(hits), Int64(hits), 40, 40],
                "\(counts)\n\(result.stderr)")
        }
    }

    @Test(
        "a database that never comes back ends the run after ORCHESTRATE_CONNECT_TIMEOUT with one line, exit 3, naming the run to resume; resumed, what finished meanwhile does not run again"
    )
    func neverBack() async throws {
        try await Self.withSuite { database, upstream, directory, cli in
            var cli = cli
            cli.environment["ORCHESTRATE_CONNECT_TIMEOUT"] = "3s"
            let run = try cli.launch(["run", "--progress", "none"], name: "run")
            #expect(
                await eventually(timeout: .seconds(60)) {
                    FileManager.default.fileExists(atPath: directory.file("ends-s1"))
                })
            await database.crash()
            let clock = ContinuousClock.now
            let result = cli.output(await run.wait(), name: "run")
            let took = ContinuousClock.now - clock
            #expect(result.exitCode == 3, "\(result.stdout)\(result.stderr)")
            let errors = result.stderr.split(separator: "\n").filter { $0.hasPrefix("error:") }
            #expect(errors.count == 1 && errors[0].contains("ORCHESTRATE_CONNECT_TIMEOUT"), "\(result.stderr)")
            #expect(
                result.stderr.split(separator: "\n").count <= 8,
                "a short account, not a warning per retry: \(result.stderr)")
            // The patience, the running scenarios' grace (5 s) and a moment: not the patience again for every step.
            #expect(took < .seconds(3) + .seconds(5) + .seconds(7), "gave up after \(took)")
            let error = String(errors.first ?? "")
            let runID = try #require(
                error.components(separatedBy: "orchestrate run --resume ").last.flatMap { UUID(uuidString: $0) },
                "\(error)")

            // The database is back: the run is taken up, and nothing that ran to its end runs again.
            try await database.start()
            let resumed = try await cli.run(
                ["run", "--resume", runID.uuidString.lowercased(), "--progress", "none"], name: "resume")
            #expect(resumed.exitCode == 0, "\(resumed.stdout)\(resumed.stderr)")
            #expect(resumed.stdout.contains("40 scenarios, 40 passed, 0 failed"), "\(resumed.stdout)")
            let twice = (1...40).filter { directory.read("ends-s\($0)").count > 2 }
            #expect(twice.isEmpty, "ran to their end twice: \(twice)\n\(error)\n\(resumed.stderr)")
            if error.contains("kept for it") { #expect(resumed.stderr.contains("recorded "), "\(resumed.stderr)") }
        }
    }
}

@Suite("The mock server under large bodies", .timeLimit(.minutes(3)))
struct MockServerMemoryTests {
    /// The resident memory of a process, in bytes.
    static func residentBytes(_ pid: Int32) -> Int? {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { return nil }
        return kilobytes * 1024
    }

    @Test(
        "a burst of large bodies is let go once logged (memory back near where it was), and Ctrl-C stops the server promptly"
    )
    func largeBodies() async throws {
        try await TemporaryDirectory.with { directory in
            try directory.write(
                "orchestrate.yml",
                """
                mock:
                  mode: mock
                  stubs:
                    - request: { path: /upload }
                      response: { status: 200, body: stored }
                """)
            let cli = OrchestrateCLI(
                directory: directory.path, database: try await TestPostgres.shared.makeDatabaseURL())
            let server = try cli.launch(["mock", "serve", "--port", "0"], name: "serve")
            let pid = try #require(server.pid)
            let port = try #require(
                await eventuallyValue(timeout: .seconds(60)) {
                    directory.read("serve.stdout").firstMatch(of: #/127\.0\.0\.1:(\d+)/#).flatMap { Int($0.1) }
                })
            let upload = """
                import http.client, os, sys
                port, count, size = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
                body = os.urandom(size)
                for i in range(count):
                    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                    connection.request("POST", "/api.test/upload", body=body + str(i).encode())
                    assert connection.getresponse().read() == b"stored"
                """
            _ = try await Python.lines(script: upload, arguments: ["\(port)", "1", "1024"], hint: "python3 uploads")
            let database = try #require(cli.environment["ORCHESTRATE_DATABASE_URL"])
            func logged() async throws -> Int64 {
                try await queryRows(database, "SELECT count(*) FROM exchanges", as: Int64.self).first ?? 0
            }
            #expect(try await eventually { try await logged() == 1 })
            let baseline = try #require(Self.residentBytes(pid))
            // 30 bodies of 4 MiB, each different: 120 MiB that must not stay.
            _ = try await Python.lines(
                script: upload, arguments: ["\(port)", "30", "\(4 << 20)"], hint: "python3 uploads")
            #expect(
                try await eventually(timeout: .seconds(60)) { try await logged() == 31 },
                "the uploads were not all logged")
            let settled = await eventually(timeout: .seconds(30)) {
                (Self.residentBytes(pid) ?? .max) < baseline + (48 << 20)
            }
            #expect(settled, "resident memory \(Self.residentBytes(pid) ?? 0) bytes, \(baseline) before the uploads")
            kill(pid, SIGINT)
            let clock = ContinuousClock.now
            let termination = await server.wait()
            #expect(
                termination.reason == .exited(0) && ContinuousClock.now - clock < .seconds(10), "\(termination.reason)")
        }
    }
}
