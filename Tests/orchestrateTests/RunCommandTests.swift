import Foundation
import Logging
import OrchestrateKit
import OrchestrateTesting
import PostgresNIO
import Store
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `orchestrate` as users run it: the built executable, a real PostgreSQL, real scenario processes.
@Suite("orchestrate run", .timeLimit(.minutes(3)))
struct RunCommandTests {
    func cli(_ directory: TemporaryDirectory) async throws -> OrchestrateCLI {
        OrchestrateCLI(directory: directory.path, database: try await TestPostgres.shared.makeDatabaseURL())
    }

    func json(_ text: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(text.utf8))
    }

    @Test("outcomes, retries and the exit code: a failure fails the run, a flaky pass does not")
    func outcomes() async throws {
        try await TemporaryDirectory.with { directory in
            try directory.write(
                "orchestrate.yml",
                """
                workers: 3
                retries: 1
                suite:
                  timeout: 20s
                  scenarios:
                    - { id: passes, command: "echo fine" }
                    - { id: fails, command: "echo broken >&2; exit 4" }
                    - { id: flaky, command: "test \\"$ORCHESTRATE_ATTEMPT\\" = 2" }
                    - { id: hangs, command: "sleep 60", timeout: 500ms }
                    - { id: crashes, command: "kill -ABRT $$" }
                """)
            let cli = try await cli(directory)
            let run = try await cli.run(["run", "--junit", "report.xml"])
            #expect(run.exitCode == 1, "\(run.stdout)\(run.stderr)")
            #expect(run.stdout.contains("5 scenarios, 1 passed, 1 flaky, 3 failed"), "\(run.stdout)")
            let junit = directory.read("report.xml")
            #expect(junit.contains(#"<failure message="attempt 2 exited with status 4" type="failed">"#))
            #expect(junit.contains(#"type="timed-out""#))
            #expect(junit.contains(#"type="crashed""#))
            #expect(junit.contains(#"<property name="flaky" value="true"/>"#))
            let runs = try #require(
                try json(try await cli.run(["runs", "--format", "json"]).stdout) as? [[String: Any]])
            #expect(runs.count == 1)
            #expect(runs[0]["failed"] as? Int == 3)
            #expect(runs[0]["flaky"] as? Int == 1)
            #expect(runs[0]["state"] as? String == "finished")

            // Only the flaky one: passes, unless --strict.
            #expect(try await cli.run(["run", "--only", "flaky", "passes"]).exitCode == 0)
            #expect(try await cli.run(["run", "--only", "flaky", "--strict"]).exitCode == 1)
        }
    }

    @Test("every attempt gets the env contract and a private HOME, TMPDIR and artifacts folder")
    func environment() async throws {
        try await TemporaryDirectory.with { directory in
            try directory.write(
                "orchestrate.yml",
                """
                workers: 2
                suite:
                  command: "env > $ORCHESTRATE_ARTIFACTS_DIR/env.txt; pwd > $ORCHESTRATE_ARTIFACTS_DIR/pwd.txt; ls -A $HOME $TMPDIR > $ORCHESTRATE_ARTIFACTS_DIR/leftovers.txt; touch $HOME/dotfile $TMPDIR/scratch"
                  env: { APP_ENV: test }
                  scenarios:
                    - { id: one, env: { APP_ENV: staging } }
                    - { id: two }
                    - { id: three }
                    - { id: four }
                """)
            let cli = try await cli(directory)
            let run = try await cli.run(["run"])
            #expect(run.exitCode == 0, "\(run.stderr)")
            let runID = try #require(run.stdout.split(separator: " ").dropFirst().first.map(String.init))
            for (scenario, appEnv) in [("one", "staging"), ("two", "test"), ("three", "test"), ("four", "test")] {
                // What the attempt left in its artifacts folder is kept in the attempt's folder afterwards.
                let folder = ".orchestrate/runs/\(runID)/\(scenario).attempt-1"
                let lines = directory.read("\(folder)/env.txt").split(separator: "\n").map(String.init)
                var env: [String: String] = [:]
                for line in lines {
                    if let eq = line.firstIndex(of: "=") {
                        env[String(line[..<eq])] = String(line[line.index(after: eq)...])
                    }
                }
                #expect(env["APP_ENV"] == appEnv)
                #expect(env["ORCHESTRATE_RUN_ID"] == runID)
                #expect(env["ORCHESTRATE_SCENARIO_ID"] == scenario)
                #expect(env["ORCHESTRATE_ATTEMPT"] == "1")
                #expect(env["ORCHESTRATE_MODE"] == "replay")
                #expect(["1", "2"].contains(env["ORCHESTRATE_WORKER"] ?? ""))
                let port = try #require(env["ORCHESTRATE_MOCK_PORT"])
                #expect(env["ORCHESTRATE_MOCK_URL"] == "http://127.0.0.1:\(port)")
                #expect(env["ORCHESTRATE_CONTROL_URL"] == "http://127.0.0.1:\(port)/__orchestrate")
                #expect(env["TEST_RUNNER_ORCHESTRATE_MOCK_URL"] == env["ORCHESTRATE_MOCK_URL"])
                #expect(env["ORCHESTRATE_SEED"].flatMap(UInt32.init) != nil)
                #expect(env["ORCHESTRATE_NOW"]?.hasSuffix("Z") == true)
                // Every variable of the contract but a pickle's and a simulator's own is set, also with the
                // TEST_RUNNER_ prefix, and test code reads back what the worker set.
                let notHere: Set<OrchestrateEnvironment.Variable> = [.gherkinURI, .gherkinLine, .pickle, .simulator]
                for variable in OrchestrateEnvironment.Variable.allCases where !notHere.contains(variable) {
                    #expect(
                        env[variable.rawValue] != nil && env[variable.testRunnerName] == env[variable.rawValue],
                        "\(variable.rawValue)")
                }
                let seen = OrchestrateEnvironment(env)
                #expect(seen.runID == runID && seen.scenarioID == scenario && seen.attempt == 1 && seen.mode == .replay)
                #expect(seen.mockURL?.absoluteString == "http://127.0.0.1:\(port)" && seen.frozenNow != nil)
                // HOME, TMPDIR and the artifacts folder are the slot's, emptied before every attempt: nothing carries
                // over.
                // The slot's folder belongs to this process (`.slots/<pid>/<slot>`).
                let worker = try #require(env["ORCHESTRATE_WORKER"])
                let slot = try #require(
                    env["HOME"]?.firstMatch(
                        of: #/\/\.orchestrate\/runs\/[0-9a-f-]+\/\.slots\/[0-9]+\/([0-9]+)\/home$/#)?.1)
                #expect(String(slot) == worker && env["HOME"]?.contains("/runs/\(runID)/") == true)
                let folderOfSlot = String(try #require(env["HOME"]).dropLast("/home".count))
                #expect(env["ORCHESTRATE_ARTIFACTS_DIR"] == folderOfSlot + "/artifacts")
                #expect(env["TMPDIR"] == folderOfSlot + "/tmp")
                let leftovers = directory.read("\(folder)/leftovers.txt").split(separator: "\n").filter {
                    !$0.isEmpty && !$0.hasSuffix(":")
                }
                #expect(leftovers.isEmpty, "files of an earlier attempt: \(leftovers)")
                #expect(
                    directory.read("\(folder)/pwd.txt").trimmingCharacters(in: .whitespacesAndNewlines)
                        == directory.path)
            }
        }
    }

    @Test("an attempt's folder keeps what it left and, unless it passed, its output; a quiet pass leaves no folder")
    func attemptFolders() async throws {
        try await TemporaryDirectory.with { directory in
            try directory.write(
                "orchestrate.yml",
                """
                workers: 1
                suite:
                  scenarios:
                    - { id: quiet, command: "true" }
                    - { id: chatty, command: "echo hello; echo warning >&2" }
                    - { id: artifact, command: "echo 42 > $ORCHESTRATE_ARTIFACTS_DIR/answer.txt" }
                    - { id: broken, command: "echo to stdout; echo to stderr >&2; exit 3" }
                    - { id: silent-failure, command: "exit 1" }
                """)
            let cli = try await cli(directory)
            let run = try await cli.run(["run", "--retries", "0"])
            #expect(run.exitCode == 1, "\(run.stdout)\(run.stderr)")
            let runID = try #require(run.stdout.split(separator: " ").dropFirst().first.map(String.init))
            let folder = { (scenario: String) in ".orchestrate/runs/\(runID)/\(scenario).attempt-1" }
            let exists = { (path: String) in FileManager.default.fileExists(atPath: directory.file(path)) }
            #expect(!exists(folder("quiet")))
            #expect(!exists(folder("chatty")), "a pass keeps no logs (they are in the database)")
            #expect(directory.read("\(folder("artifact"))/answer.txt") == "42\n")
            #expect(!exists("\(folder("artifact"))/stdout.log"))
            #expect(directory.read("\(folder("broken"))/stdout.log") == "to stdout\n")
            #expect(directory.read("\(folder("broken"))/stderr.log") == "to stderr\n")
            #expect(run.stdout.contains("logs in \(directory.file(folder("broken")))"), "\(run.stdout)")
            // A failure without output still gets its (empty) folder, where the summary points.
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: directory.file(folder("silent-failure"))).isEmpty)
            // Every attempt's output is also in PostgreSQL.
            let database = try #require(cli.environment["ORCHESTRATE_DATABASE_URL"])
            let output = try await queryRows(
                database, "SELECT scenario_id, stdout, stderr FROM attempts WHERE scenario_id = 'chatty'",
                as: (String, String, String).self)
            #expect(output.first.map { [$0.1, $0.2] } == ["hello\n", "warning\n"], "\(output)")
        }
    }

    @Test("bad config names file:line:column, exits 2 and starts nothing")
    func badConfig() async throws {
        try await TemporaryDirectory.with { directory in
            try directory.write(
                "orchestrate.yml",
                """
                workers: 2
                suite:
                  scenarios:
                    - { id: a, command: "touch ran" }
                    - { id: a, command: "touch ran" }
                """)
            let cli = try await cli(directory)
            let run = try await cli.run(["run"])
            #expect(run.exitCode == 2)
            #expect(run.stderr.contains("orchestrate.yml:5:13: duplicate scenario id \"a\""), "\(run.stderr)")
            #expect(run.stderr.split(separator: "\n").count == 1)
            #expect(!FileManager.default.fileExists(atPath: directory.file("ran")))
            #expect(try await cli.run(["run", "--config", "missing.yml"]).exitCode == 2)
            #expect(try await cli.run(["run", "--workers", "0"]).exitCode == 2)
            try directory.write("orchestrate.yml", "suite:\n  scenarios:\n    - { id: a, command: x }\n")
            let unknown = try await cli.run(["run", "--only", "nope"])
            #expect(unknown.exitCode == 2)
            #expect(unknown.stderr.contains("--only nope: no such scenario"))
            #expect(try await cli.run(["run", "--resume", UUID().uuidString]).exitCode == 2)
        }
    }

    @Test(
        "--tags selects scenarios by a tag expression in scenarios and run; a bad expression exits 2 and starts nothing"
    )
    func tagSelection() async throws {
        try await TemporaryDirectory.with { directory in
            try directory.write(
                "orchestrate.yml",
                """
                workers: 2
                suite:
                  scenarios:
                    - { id: login, command: "touch ran-login", tags: [smoke] }
                    - { id: checkout, command: "touch ran-checkout", tags: ["@smoke", wip] }
                    - { id: search, command: "touch ran-search", tags: [slow] }
                    - { id: profile, command: "touch ran-profile" }
                """)
            let cli = try await cli(directory)
            let listed = try await cli.run([
                "scenarios", "--tags", "@smoke and not (@wip or @slow)", "--format", "json",
            ])
            #expect(listed.exitCode == 0, "\(listed.stderr)")
            let ids = try #require(try json(listed.stdout) as? [[String: Any]]).compactMap { $0["id"] as? String }
            #expect(ids == ["login"])
            let notSmoke = try await cli.run(["scenarios", "--tags", "not @smoke", "--format", "json"])
            #expect(
                Set(try #require(try json(notSmoke.stdout) as? [[String: Any]]).compactMap { $0["id"] as? String }) == [
                    "search", "profile",
                ])

            let bad = try await cli.run(["run", "--tags", "@smoke and or @wip"])
            #expect(bad.exitCode == 2)
            #expect(
                bad.stderr.contains(
                    #"Tag expression "@smoke and or @wip" could not be parsed because of syntax error: Expected operand."#
                ),
                "\(bad.stderr)")
            let none = try await cli.run(["run", "--tags", "@nightly"])
            #expect(none.exitCode == 2 && none.stderr.contains("no scenario"), "\(none.stderr)")
            #expect(!FileManager.default.fileExists(atPath: directory.file("ran-login")))

            let run = try await cli.run(["run", "--tags", "@smoke or @slow", "--only", "login", "search", "profile"])
            #expect(run.exitCode == 0, "\(run.stdout)\(run.stderr)")
            #expect(FileManager.default.fileExists(atPath: directory.file("ran-login")))
            #expect(FileManager.default.fileExists(atPath: directory.file("ran-search")))
            #expect(!FileManager.default.fileExists(atPath: directory.file("ran-checkout")))
            #expect(!FileManager.default.fileExists(atPath: directory.file("ran-profile")))
        }
    }

    @Test("an unreachable database is an infrastructure failure (exit 3)")
    func unreachableDatabase() async throws {
        try await TemporaryDirectory.with { directory in
            try directory.write("orchestrate.yml", "suite:\n  scenarios:\n    - { id: a, command: 'true' }\n")
            var cli = OrchestrateCLI(
                directory: directory.path, database: "postgresql://nobody@/none?host=\(directory.path)")
            cli.environment["ORCHESTRATE_CONNECT_TIMEOUT"] = "1"
            let run = try await cli.run(["run"])
            #expect(run.exitCode == 3)
            #expect(run.stderr.contains("unreachable"))
        }
    }

    @Test("two concurrent runs on one host never share a port; each slot holds its port")
    func portsAreUnique() async throws {
        try await TemporaryDirectory.with { directory in
            let probe =
                #"python3 -c 'import socket,sys; s=socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1])))' $ORCHESTRATE_MOCK_PORT 2>/dev/null && echo free || echo held"#
            try directory.write(
                "orchestrate.yml",
                """
                workers: 3
                suite:
                  command: "echo $ORCHESTRATE_MOCK_PORT $ORCHESTRATE_WORKER $(\(probe.replacingOccurrences(of: "\"", with: "\\\""))) >> ports-$RUN_NAME; sleep 0.3"
                  scenarios: [\((1...9).map { "{ id: s\($0) }" }.joined(separator: ", "))]
                """)
            var first = try await cli(directory)
            var second = first
            first.environment["RUN_NAME"] = "a"
            second.environment["RUN_NAME"] = "b"
            async let a = first.run(["run"], name: "a")
            async let b = second.run(["run"], name: "b")
            let (resultA, resultB) = try await (a, b)
            #expect(resultA.exitCode == 0, "\(resultA.stderr)")
            #expect(resultB.exitCode == 0, "\(resultB.stderr)")
            func ports(_ name: String) -> [String: Set<String>] {
                var byWorker: [String: Set<String>] = [:]
                for line in directory.read("ports-\(name)").split(separator: "\n") {
                    let fields = line.split(separator: " ").map(String.init)
                    #expect(fields.count == 3 && fields[2] == "held", "port not held: \(line)")
                    byWorker[fields[1], default: []].insert(fields[0])
                }
                return byWorker
            }
            let portsA = ports("a"), portsB = ports("b")
            // One port per slot for the whole run, different between slots and between runs.
            #expect(portsA.values.allSatisfy { $0.count == 1 })
            #expect(portsB.values.allSatisfy { $0.count == 1 })
            let allA = portsA.values.reduce(into: Set<String>()) { $0.formUnion($1) }
            let allB = portsB.values.reduce(into: Set<String>()) { $0.formUnion($1) }
            #expect(allA.count == portsA.count)
            #expect(allA.isDisjoint(with: allB))
        }
    }
}

@Suite("orchestrate run with the mock server", .timeLimit(.minutes(3)))
struct MockRunTests {
    @Test(
        "record through each slot's mock server, then replay with the backend gone; exchanges land in PostgreSQL under their steps"
    )
    func recordThenReplay() async throws {
        try await TemporaryDirectory.with { directory in
            let upstream = try await TestUpstream.start()
            // The "app": reaches its backend only through the mock URL, and checks what it got.
            try directory.write(
                "fetch.py",
                """
                import json, os, sys, urllib.request
                def step(**fields):
                    request = urllib.request.Request(os.environ["ORCHESTRATE_CONTROL_URL"] + "/steps", data=json.dumps(fields).encode(), method="POST")
                    urllib.request.urlopen(request).read()
                step(keyword="Given ", name="the app is open")
                step(status="passed")
                step(keyword="When ", name="I open item " + sys.argv[1])
                body = urllib.request.urlopen(os.environ["ORCHESTRATE_MOCK_URL"] + "/api.test/items/" + sys.argv[1] + "?page=1").read().decode()
                print(body)
                ok = "/items/" + sys.argv[1] in body
                step(status="passed" if ok else "failed")
                sys.exit(0 if ok else 1)
                """)
            try directory.write(
                "orchestrate.yml",
                """
                workers: 2
                suite:
                  command: "python3 fetch.py {id}"
                  scenarios: [{ id: one }, { id: two }, { id: three }]
                mock:
                  hosts: { api.test: "\(upstream.url)" }
                """)
            let cli = OrchestrateCLI(
                directory: directory.path, database: try await TestPostgres.shared.makeDatabaseURL())
            let record = try await cli.run(["run", "--mode", "record"])
            #expect(record.exitCode == 0, "\(record.stdout)\(record.stderr)")
            #expect(upstream.hits.withLock { $0 } == 3)
            for id in ["one", "two", "three"] {
                #expect(FileManager.default.fileExists(atPath: directory.file("Recordings/\(id).har")))
            }
            await upstream.stop()

            let replay = try await cli.run(["run", "--mode", "replay"])
            #expect(replay.exitCode == 0, "\(replay.stdout)\(replay.stderr)")
            #expect(upstream.hits.withLock { $0 } == 3)

            let database = try #require(cli.environment["ORCHESTRATE_DATABASE_URL"])
            let rows = try await queryRows(
                database, "SELECT mode, matched, status FROM exchanges ORDER BY mode, attempt_id, sequence",
                as: (String, Bool, Int32).self)
            #expect(rows.count == 6)
            #expect(rows.allSatisfy { $0.1 && $0.2 == 200 })
            #expect(rows.map(\.0).sorted() == ["record", "record", "record", "replay", "replay", "replay"])

            // Each exchange under the step that was open, with the step's timing.
            let steps = try await queryRows(
                database,
                """
                SELECT s.name, s.status, count(e.attempt_id)::int, bool_and(s.finished_at >= s.started_at)
                FROM steps s LEFT JOIN exchanges e ON e.attempt_id = s.attempt_id AND e.step_position = s.position
                GROUP BY s.attempt_id, s.position, s.name, s.status ORDER BY s.name
                """, as: (String, String, Int32, Bool).self)
            #expect(steps.count == 12)
            #expect(steps.filter { $0.0 == "the app is open" }.allSatisfy { $0.2 == 0 && $0.1 == "passed" })
            #expect(steps.filter { $0.0.hasPrefix("I open item") }.allSatisfy { $0.2 == 1 && $0.1 == "passed" && $0.3 })
        }
    }
}
