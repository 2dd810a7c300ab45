import Foundation
import OrchestrateTesting
import PostgresNIO
import ProcessSupervisor
import Testing

/// Many hosts, one run: hosts are network namespaces (each with its own loopback, host name and link), the database
/// the embedded cluster opened to them by `orchestrate db expose` (TLS checked against its CA, SCRAM), and each host
/// runs `orchestrate run --join` or `agent` from a checkout of its own. docs/many-hosts.md names these.
@Suite("Many hosts, one run", .serialized, .timeLimit(.minutes(4)))
struct ManyHostsTests {
    /// The shared database and the hosts' checkouts of one suite.
    struct Fleet {
        let directory: TemporaryDirectory
        let hosts: NetworkHosts
        /// The URL the hosts use (verify-full against the cluster's CA; the password comes from PGPASSWORD).
        let url: String
        /// The same for the test's own queries, with the password file.
        let adminURL: String
        let password: String

        /// Host `n`'s checkout.
        func checkout(_ n: Int) -> String { directory.file("h\(n)") }

        /// `orchestrate ARGUMENTS…` on host `n`, in its checkout.
        func launch(
            _ n: Int, _ arguments: [String], name: String, environment extra: [String: String] = [:]
        ) throws -> SupervisedProcess {
            var environment = ProcessInfo.processInfo.environment
            environment["CI"] = "true"
            environment["ORCHESTRATE_DATABASE_URL"] = url
            environment["PGPASSWORD"] = password
            environment.merge(extra) { $1 }
            return try hosts.launch(
                n, OrchestrateCLI.executable, arguments, directory: checkout(n), environment: environment, name: name)
        }

        func output(_ n: Int, _ name: String) -> String {
            ((try? String(contentsOfFile: "\(checkout(n))/\(name).stdout", encoding: .utf8)) ?? "")
                + ((try? String(contentsOfFile: "\(checkout(n))/\(name).stderr", encoding: .utf8)) ?? "")
        }

        /// What the scenarios wrote, one line per execution: host, slot, port, scenario, attempt.
        var log: [[String]] {
            directory.read("log").split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        }

        func rows<each T: PostgresDecodable & Sendable>(
            _ sql: String, as types: (repeat each T).Type
        ) async throws -> [(repeat each T)] {
            try await queryRows(adminURL, sql, as: types)
        }
    }

    /// `count` hosts, the embedded cluster of a folder of the test opened to them, and `config` in a checkout per host.
    static func withFleet(hosts count: Int, config: String, _ body: (Fleet) async throws -> Void) async throws {
        try await TemporaryDirectory.with { directory in
            try await NetworkHosts.with(count: count) { hosts in
                try directory.write("db/orchestrate.yml", config)
                for n in 1...count { try directory.write("h\(n)/orchestrate.yml", config) }
                try directory.write(
                    "work.sh",
                    """
                    #!/bin/sh
                    # A scenario: says where it runs, then takes the milliseconds its id names (s250x3: 250 ms).
                    echo "$(hostname) $ORCHESTRATE_WORKER $ORCHESTRATE_MOCK_PORT $1 $ORCHESTRATE_ATTEMPT" >> \(directory.file("log"))
                    ms=${1#s}
                    sleep $(awk "BEGIN { print ${ms%%[!0-9]*} / 1000 }")
                    """)
                let database = OrchestrateCLI(directory: directory.file("db"), database: nil)
                let exposed = try await database.run(["db", "expose", "--listen", hosts.gateway], name: "expose")
                do {
                    #expect(exposed.exitCode == 0, "\(exposed.stdout)\(exposed.stderr)")
                    let root = directory.file("db/.orchestrate")
                    let passfile = "\(root)/postgres.pgpass"
                    let password = try #require(
                        directory.read("db/.orchestrate/postgres.pgpass").split(separator: "\n").first {
                            !$0.hasPrefix("#")
                        }?
                        .split(separator: ":").last.map(String.init))
                    #expect(
                        !exposed.stdout.contains(password) && !exposed.stderr.contains(password),
                        "the password was printed")
                    let url =
                        "postgresql://orchestrate_app@\(hosts.gateway):5432/postgres?sslmode=verify-full&sslrootcert=\(root)/postgres-ca.crt"
                    #expect(exposed.stdout.contains(url), "\(exposed.stdout)")
                    try await body(
                        Fleet(
                            directory: directory, hosts: hosts, url: url, adminURL: url + "&passfile=\(passfile)",
                            password: password))
                    _ = try await database.run(["db", "stop"], name: "stop")
                } catch {
                    _ = try? await database.run(["db", "stop"], name: "stop")
                    throw error
                }
            }
        }
    }

    /// The hosts' checkouts sit in folders of different names: `project:` makes them one suite.
    static func suite(_ ids: [String], workers: Int) -> String {
        """
        project: fleet
        workers: \(workers)
        suite:
          command: "sh ../work.sh {id}"
          scenarios:
        \(ids.map { "    - { id: \($0) }" }.joined(separator: "\n"))
        """
    }

    @Test(
        "three hosts join one run: each scenario runs once, ports are per host, longest first across hosts, one JUnit each"
    )
    func threeHostsJoin() async throws {
        let ids = (0..<18).map { "s\(100 + $0 * 7 % 18 * 50)x\($0)" }
        try await Self.withFleet(hosts: 3, config: Self.suite(ids, workers: 2)) { fleet in
            // History first, from the test's own namespace, so that the joined run knows the expected durations.
            let seed = OrchestrateCLI(directory: fleet.checkout(1), database: fleet.adminURL)
            let seeded = try await seed.run(["run", "--workers", "6", "--progress", "none"], name: "seed")
            #expect(seeded.exitCode == 0, "\(seeded.stdout)\(seeded.stderr)")
            try fleet.directory.write("log", "")

            let key = "pipeline-\(UUID().uuidString.prefix(8))"
            let nodes = [
                try fleet.launch(
                    1, ["run", "--join", key, "--junit", "junit.xml", "--progress", "lines"], name: "node"),
                try fleet.launch(
                    2, ["run", "--join", key, "--junit", "junit.xml", "--progress", "lines"], name: "node"),
                try fleet.launch(
                    3, ["agent", "--join", key, "--junit", "junit.xml", "--progress", "lines"], name: "node"),
            ]
            for (index, node) in nodes.enumerated() {
                let termination = await node.wait()
                #expect(termination.reason == .exited(0), "host \(index + 1): \(fleet.output(index + 1, "node"))")
                #expect(
                    fleet.output(index + 1, "node").contains("18 scenarios, 18 passed, 0 failed"),
                    "\(fleet.output(index + 1, "node"))")
                // The summary's line per host, and the progress lines' view of the hosts while it ran.
                let output = fleet.output(index + 1, "node")
                #expect(
                    output.contains("hosts:\n  host1  2 slot(s)") && output.contains("\n  host3  2 slot(s)"),
                    "\(output)")
                #expect(output.contains("\nhosts: host"), "\(output)")
            }
            // Each scenario ran exactly once, on some host; every host took part.
            let log = fleet.log
            #expect(log.map { $0[3] }.sorted() == ids.sorted(), "\(log)")
            #expect(Set(log.map { $0[0] }) == ["host1", "host2", "host3"], "\(log)")
            // Within a host each slot has its port and no two slots share one.
            for host in ["host1", "host2", "host3"] {
                let slots = Dictionary(grouping: log.filter { $0[0] == host }, by: { $0[1] }).mapValues {
                    Set($0.map { $0[2] })
                }
                #expect(slots.values.allSatisfy { $0.count == 1 }, "\(host): \(slots)")
                #expect(Set(slots.values.flatMap { $0 }).count == slots.count, "\(host): \(slots)")
            }
            // The database has the same: one finished attempt per scenario, with its host; nothing abandoned.
            let attempts = try await fleet.rows(
                """
                SELECT a.scenario_id, a.state, a.host, coalesce(a.expected_ms, -1),
                       (extract(epoch FROM a.started_at) * 1000)::bigint
                FROM attempts a JOIN runs r ON r.id = a.run_id WHERE r.join_key = '\(key)' ORDER BY a.started_at, a.id
                """, as: (String, String, String, Int64, Int64).self)
            #expect(attempts.count == 18 && attempts.allSatisfy { $0.1 == "finished" }, "\(attempts)")
            #expect(Set(attempts.map(\.2)) == ["host1", "host2", "host3"])
            // Longest expected first, across hosts: a claim never comes after a longer one's unless both were claimed
            // within the same moment.
            for (i, later) in attempts.enumerated() {
                for earlier in attempts[..<i] where later.3 > earlier.3 + 20 {
                    #expect(
                        later.4 - earlier.4 <= 50,
                        "\(later.0) (\(later.3) ms expected) was claimed after \(earlier.0) (\(earlier.3) ms)")
                }
            }
            // The nodes' JUnit files, merged as a CI merges them, hold every scenario exactly once.
            let junitIDs = (1...3).flatMap { n in
                Self.testcaseNames(
                    (try? String(contentsOfFile: "\(fleet.checkout(n))/junit.xml", encoding: .utf8)) ?? "")
            }
            #expect(junitIDs.sorted() == ids.sorted(), "\(junitIDs)")
            // One judge; the run and its hosts are listed.
            let judged = try await fleet.rows(
                "SELECT count(*) FROM runs WHERE join_key = '\(key)' AND exit_code = 0", as: Int.self)
            #expect(judged.first == 1)
            let listing = try await seed.run(["runs", "--limit", "1"], name: "runs")
            #expect(listing.stdout.contains("host1,host2,host3"), "\(listing.stdout)")
            // The other sslmodes reach it too; without TLS, or with a CA that did not sign its certificate, nothing
            // does.
            var impatient = seed
            impatient.environment["ORCHESTRATE_CONNECT_TIMEOUT"] = "1"
            for (mode, expected) in [("require", Int32(0)), ("verify-ca", 0), ("disable", 3)] {
                let url = fleet.adminURL.replacingOccurrences(of: "sslmode=verify-full", with: "sslmode=\(mode)")
                let result = try await impatient.run(["runs", "--limit", "1", "--database", url], name: "tls-\(mode)")
                #expect(result.exitCode == expected, "sslmode=\(mode): \(result.stderr)")
                if mode == "disable" { #expect(result.stderr.contains("no encryption"), "\(result.stderr)") }
            }
            let made = try await MetricsTests.run(
                "openssl",
                [
                    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
                    "-subj", "/CN=stranger",
                    "-keyout", fleet.directory.file("other-ca.key"), "-out", fleet.directory.file("other-ca.crt"),
                ])
            #expect(made.status == 0, "\(made.output)")
            let stranger = fleet.adminURL.replacingOccurrences(
                of: "sslrootcert=\(fleet.directory.file("db/.orchestrate/postgres-ca.crt"))",
                with: "sslrootcert=\(fleet.directory.file("other-ca.crt"))")
            let refused = try await impatient.run(["runs", "--database", stranger], name: "stranger")
            #expect(refused.exitCode == 3 && !refused.stderr.contains(fleet.password), "\(refused.stderr)")
        }
    }

    @Test("hosts that a killed test process left behind are removed by the next test that makes hosts")
    func abandonedHosts() async throws {
        // A process id above Linux's largest (2^22): no such process can exist.
        let stale = "orch-7ffff0x1-h1"
        _ = try? NetworkHosts.run(["netns", "del", stale])
        try NetworkHosts.run(["netns", "add", stale])
        try NetworkHosts.run(["link", "add", "name", "ob7ffff0x1", "type", "bridge"])
        try await NetworkHosts.with(count: 1) { hosts in
            let namespaces = try NetworkHosts.run(["netns", "list"])
            #expect(!namespaces.contains(stale) && namespaces.contains(hosts.namespace(1)), "\(namespaces)")
            #expect(!(try NetworkHosts.run(["-o", "link"])).contains("ob7ffff0x1:"))
        }
    }

    @Test(
        "a host killed mid-run: its attempts come back when their leases expire and run elsewhere, once, no retry spent"
    )
    func hostKilled() async throws {
        let ids = (1...12).map { "s1500x\($0)" }
        try await Self.withFleet(hosts: 3, config: Self.suite(ids, workers: 2)) { fleet in
            let key = "killed-\(UUID().uuidString.prefix(8))"
            let arguments = ["run", "--join", key, "--lease", "2s", "--progress", "lines"]
            let first = try fleet.launch(1, arguments, name: "node")
            #expect(await eventually(timeout: .seconds(30)) { fleet.log.contains { $0[0] == "host1" } })
            let victim = try fleet.launch(3, arguments, name: "node")
            let second = try fleet.launch(2, arguments, name: "node")
            #expect(
                await eventually(timeout: .seconds(30)) { fleet.log.contains { $0[0] == "host3" } },
                "host3 never ran anything")
            fleet.hosts.killAll(3)
            _ = await victim.wait()
            // A supervisor's command started as the host died ends with it (its supervisor watches its parent).
            #expect(
                await eventually(timeout: .seconds(10)) { fleet.hosts.pids(3).isEmpty },
                "a process of the killed host lives on")
            for (n, node) in [(1, first), (2, second)] {
                let termination = await node.wait()
                #expect(termination.reason == .exited(0), "host \(n): \(fleet.output(n, "node"))")
                #expect(
                    fleet.output(n, "node").contains("12 scenarios, 12 passed, 0 failed"), "\(fleet.output(n, "node"))")
            }
            let attempts = try await fleet.rows(
                """
                SELECT a.scenario_id, a.state, a.attempt, coalesce(a.host, ''), array_to_string(a.lost_hosts, ',')
                FROM attempts a JOIN runs r ON r.id = a.run_id WHERE r.join_key = '\(key)' ORDER BY a.id
                """, as: (String, String, Int, String, String).self)
            let lost = attempts.filter { $0.1 == "abandoned" }
            #expect(!lost.isEmpty && lost.allSatisfy { $0.3 == "host3" }, "\(attempts)")
            // Every scenario finished exactly once, as its first attempt; those lost on host3 say so.
            let finished = attempts.filter { $0.1 == "finished" }
            #expect(finished.map(\.0).sorted() == ids.sorted(), "\(attempts)")
            #expect(finished.allSatisfy { $0.2 == 1 }, "a retry was spent: \(attempts)")
            for gone in lost { #expect(finished.first { $0.0 == gone.0 }?.4 == "host3", "\(gone.0): \(attempts)") }
        }
    }

    @Test(
        "a host cut off from the database: its attempt runs elsewhere, its late completion is fenced out and recorded")
    func hostPartitioned() async throws {
        let ids = ["s6000long"] + (1...8).map { "s300x\($0)" }
        try await Self.withFleet(hosts: 3, config: Self.suite(ids, workers: 2)) { fleet in
            let key = "partition-\(UUID().uuidString.prefix(8))"
            let arguments = ["run", "--join", key, "--lease", "2s", "--progress", "lines"]
            // host3 plans the run alone on one slot and takes the long scenario (first in the plan, never seen).
            let cut = try fleet.launch(
                3, arguments + ["--workers", "1"], name: "node", environment: ["ORCHESTRATE_CONNECT_TIMEOUT": "120"])
            #expect(
                await eventually(timeout: .seconds(30)) {
                    fleet.log.contains { $0[0] == "host3" && $0[3] == "s6000long" }
                })
            try fleet.hosts.setLink(3, up: false)
            let others = [try fleet.launch(1, arguments, name: "node"), try fleet.launch(2, arguments, name: "node")]
            // Its lease expires; another host takes the attempt over.
            let takenOver = await eventually(timeout: .seconds(30)) {
                fleet.log.contains { $0[0] != "host3" && $0[3] == "s6000long" }
            }
            try fleet.hosts.setLink(3, up: true)
            #expect(takenOver, "the cut-off host's attempt never ran elsewhere")
            for (n, node) in [(1, others[0]), (2, others[1]), (3, cut)] {
                let termination = await node.wait()
                #expect(termination.reason == .exited(0), "host \(n): \(fleet.output(n, "node"))")
                #expect(
                    fleet.output(n, "node").contains("9 scenarios, 9 passed, 0 failed"),
                    "host \(n): \(fleet.output(n, "node"))")
            }
            #expect(fleet.output(3, "node").contains("lease was taken back"), "\(fleet.output(3, "node"))")
            let attempts = try await fleet.rows(
                """
                SELECT a.scenario_id, a.state, coalesce(a.host, ''), coalesce(a.fenced->>'worker', ''), coalesce(a.outcome, '')
                FROM attempts a JOIN runs r ON r.id = a.run_id WHERE r.join_key = '\(key)' ORDER BY a.id
                """, as: (String, String, String, String, String).self)
            let long = attempts.filter { $0.0 == "s6000long" }
            #expect(long.map(\.1) == ["abandoned", "finished"], "\(attempts)")
            #expect(
                long.first?.2 == "host3" && long.first?.3.hasPrefix("host3/") == true,
                "the late completion is not on record: \(long)")
            #expect(long.last?.2 != "host3" && long.last?.4 == "passed", "\(long)")
            #expect(attempts.filter { $0.1 == "finished" }.map(\.0).sorted() == ids.sorted(), "\(attempts)")
        }
    }

    /// The `name` of every `<testcase>` in a JUnit document.
    static func testcaseNames(_ xml: String) -> [String] {
        xml.components(separatedBy: "<testcase ").dropFirst().compactMap { element in
            guard let start = element.range(of: "name=\"") else { return nil }
            return String(element[start.upperBound...].prefix { $0 != "\"" })
        }
    }
}
