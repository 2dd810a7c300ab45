import Foundation
import OrchestrateModel
import OrchestrateTesting
import PostgresNIO
import ProcessSupervisor
import Store
import Testing

/// Joining runs as CI nodes do, on one machine (the many-hosts tests do it across network namespaces): node re-runs,
/// late nodes, agents, reports from the database, and a scenario that keeps losing its host.
@Suite("orchestrate run --join and agent", .timeLimit(.minutes(3)))
struct JoinCommandTests {
    static let config = """
        workers: 1
        suite:
          command: "echo $ORCHESTRATE_SCENARIO_ID >> ran; sleep 0.2; test ! -f fail-{id}"
          scenarios:
            - { id: a }
            - { id: b }
            - { id: c }
            - { id: d }
            - { id: e }
            - { id: f }
        """

    /// The scenario ids each run of the key ran, from the database: (run id, parent, node, scenario).
    func ran(_ url: String, key: String) async throws -> [(UUID, String)] {
        try await queryRows(
            url,
            """
            SELECT a.run_id, a.scenario_id FROM attempts a JOIN runs r ON r.id = a.run_id
            WHERE (r.join_key = '\(key)' OR r.parent_run_id = (SELECT id FROM runs WHERE join_key = '\(key)')) AND a.state = 'finished'
            ORDER BY r.created_at, a.scenario_id
            """, as: (UUID, String).self)
    }

    @Test(
        "a node re-run runs exactly that node's share, or its failures; a late node and an agent get the run's exit code"
    )
    func nodeReruns() async throws {
        try await TemporaryDirectory.with { directory in
            try directory.write("orchestrate.yml", Self.config)
            try directory.write("fail-c", "")
            let url = try await TestPostgres.shared.makeDatabaseURL()
            let cli = OrchestrateCLI(directory: directory.path, database: url)
            let key = "ci-\(UUID().uuidString.prefix(8))"
            let nodes = [
                try cli.launch(["run", "--join", key, "--node", "n1", "--junit", "n1.xml"], name: "n1"),
                try cli.launch(["run", "--join", key, "--node", "n2", "--junit", "n2.xml"], name: "n2"),
            ]
            for (node, name) in zip(nodes, ["n1", "n2"]) {
                let result = cli.output(await node.wait(), name: name)
                #expect(result.exitCode == 1, "\(name): \(result.stdout)\(result.stderr)")
                #expect(result.stdout.contains("6 scenarios, 5 passed, 1 failed"), "\(result.stdout)")
            }
            let first = try await ran(url, key: key)
            let runID = try #require(first.first?.0)
            // Which node ran what, as the database has it.
            let shares = try await queryRows(
                url,
                """
                SELECT m.node, a.scenario_id FROM attempts a JOIN run_members m ON m.run_id = a.run_id AND m.member = a.lease_owner
                WHERE a.run_id = '\(runID)' ORDER BY 1, 2
                """, as: (String, String).self)
            let share = Dictionary(grouping: shares, by: \.0).mapValues { $0.map(\.1) }
            #expect(Set(shares.map(\.1)).count == 6 && share.count == 2, "\(shares)")
            // Each node's --junit holds what it settled: merged, the whole run once.
            let junit = ["n1", "n2"].flatMap { ManyHostsTests.testcaseNames(directory.read("\($0).xml")) }
            #expect(junit.sorted() == ["a", "b", "c", "d", "e", "f"])

            // Re-running n1's CI job: exactly n1's scenarios again, as a run of its own.
            try directory.write("ran", "")
            let again = try await cli.run(["run", "--join", key, "--node", "n1"], name: "again")
            #expect(again.stderr.contains("re-running node n1's share"), "\(again.stderr)")
            #expect(
                directory.read("ran").split(separator: "\n").map(String.init).sorted() == share["n1"],
                "\(directory.read("ran"))")
            #expect(again.exitCode == (share["n1"]!.contains("c") ? 1 : 0))

            // Re-running only the failures of the node that had c: only c; fixed, it passes.
            let failing = try #require(share.first { $0.value.contains("c") }?.key)
            try FileManager.default.removeItem(atPath: directory.file("fail-c"))
            try directory.write("ran", "")
            let fixed = try await cli.run(["run", "--join", key, "--node", failing, "--failed"], name: "fixed")
            #expect(fixed.exitCode == 0, "\(fixed.stdout)\(fixed.stderr)")
            #expect(directory.read("ran") == "c\n")
            let clean = try await cli.run(["run", "--join", key, "--node", failing, "--failed"], name: "clean")
            #expect(clean.exitCode == 0 && clean.stderr.contains("no failures"), "\(clean.stderr)")

            // A node that arrives after the run settled says so and exits with the run's code, as does an agent.
            let late = try await cli.run(["run", "--join", key], name: "late")
            #expect(late.exitCode == 1 && late.stderr.contains("is finished already"), "\(late.stderr)")
            let agent = try await cli.run(["agent", "--run", runID.uuidString], name: "agent")
            #expect(agent.exitCode == 1 && agent.stderr.contains("is finished already"), "\(agent.stderr)")

            // The whole run's reports, from the database.
            let report = try await cli.run(
                ["report", runID.uuidString, "--junit", "all.xml", "--html", "all.html"], name: "report")
            #expect(report.exitCode == 0, "\(report.stderr)")
            #expect(ManyHostsTests.testcaseNames(directory.read("all.xml")).sorted() == ["a", "b", "c", "d", "e", "f"])
            #expect(directory.read("all.html").contains("<html"))
            let unknown = try await cli.run(["report", UUID().uuidString], name: "unknown")
            #expect(unknown.exitCode == 2 && unknown.stderr.split(separator: "\n").count == 1, "\(unknown.stderr)")
        }
    }

    @Test("an agent waits for the node that plans its run; one that never comes ends it with one line, exit 3")
    func agentWaits() async throws {
        try await TemporaryDirectory.with { directory in
            try directory.write("orchestrate.yml", Self.config)
            let cli = OrchestrateCLI(
                directory: directory.path, database: try await TestPostgres.shared.makeDatabaseURL())
            let key = "late-\(UUID().uuidString.prefix(8))"
            let agent = try cli.launch(["agent", "--join", key, "--workers", "2"], name: "agent")
            // The agent starts, opens and migrates its database first: on a loaded machine that takes a while.
            #expect(
                await eventually(timeout: .seconds(90)) {
                    directory.read("agent.stderr").contains("waiting for a node to plan the run")
                },
                "\(directory.read("agent.stderr"))")
            let planner = try await cli.run(["run", "--join", key, "--workers", "1"], name: "planner")
            let waited = cli.output(await agent.wait(), name: "agent")
            #expect(planner.exitCode == 0 && waited.exitCode == 0, "\(planner.stderr)\(waited.stderr)")
            #expect(waited.stdout.contains("6 scenarios, 6 passed"), "\(waited.stdout)")
            #expect(directory.read("ran").split(separator: "\n").count == 6)
            let nobody = try await cli.run(["agent", "--join", "never-\(key)", "--wait", "1s"], name: "nobody")
            #expect(
                nobody.exitCode == 3 && nobody.stderr.contains("no run was planned under never-"), "\(nobody.stderr)")
        }
    }

    @Test("a scenario whose hosts vanished three times is not run again: an infrastructure error naming them")
    func lostThrice() async throws {
        try await TemporaryDirectory.with { directory in
            try directory.write("orchestrate.yml", Self.config)
            let url = try await TestPostgres.shared.makeDatabaseURL()
            let cli = OrchestrateCLI(directory: directory.path, database: url)
            let key = "lost-\(UUID().uuidString.prefix(8))"
            // The run is planned; then its attempt of c is taken by hosts that vanish, one after another.
            let planned = try await cli.run(["run", "--join", key, "--only", "c", "--workers", "1"], name: "plan")
            #expect(planned.exitCode == 0, "\(planned.stderr)")
            try directory.write("ran", "")
            let runID = try #require(
                try await queryRows(url, "SELECT id FROM runs WHERE join_key = '\(key)'", as: UUID.self).first)
            try await Database.with(try DatabaseEndpoint(url: url), logger: .init(label: "test")) { database in
                try await database.client.query(
                    "UPDATE runs SET state = 'running', exit_code = NULL, judged_by = NULL WHERE id = \(runID)",
                    logger: database.logger)
                try await database.client.query(
                    "UPDATE attempts SET state = 'abandoned' WHERE run_id = \(runID)", logger: database.logger)
                try await database.client.query(
                    "INSERT INTO attempts (run_id, project, scenario_id, attempt) SELECT id, project, 'c', 1 FROM runs WHERE id = \(runID)",
                    logger: database.logger)
                try await database.client.query(
                    "UPDATE run_scenarios SET result = NULL WHERE run_id = \(runID)", logger: database.logger)
                var queue = AttemptQueue(database: database, lease: .milliseconds(1))
                queue.retryAvoidance = .zero
                for host in ["mac-1", "mac-2", "mac-3"] {
                    _ = try #require(
                        try await queue.claim(
                            runID: runID, worker: WorkerIdentity(host: host, pid: 1, slot: 1), port: 1))
                    #expect(try await eventually { try await queue.reapExpired(runID: runID) == 1 })
                }
            }
            let agent = try await cli.run(["agent", "--run", runID.uuidString], name: "agent")
            #expect(agent.exitCode == 1, "\(agent.stdout)\(agent.stderr)")
            #expect(
                agent.stdout.contains("its host vanished 3 times while it ran (mac-1, mac-2, mac-3)"), "\(agent.stdout)"
            )
            let rows = try await queryRows(
                url, "SELECT state, coalesce(outcome, '') FROM attempts WHERE run_id = '\(runID)' ORDER BY id",
                as: (String, String).self)
            #expect(rows.last.map { [$0.0, $0.1] } == ["finished", "infrastructure-error"], "\(rows)")
            #expect(directory.read("ran").isEmpty, "the scenario ran again")
        }
    }
}
