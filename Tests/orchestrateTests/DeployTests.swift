import Foundation
import OrchestrateTesting
import ProcessSupervisor
import Testing

/// Deploy/: the Kubernetes manifests validate against Kubernetes' schemas (PyPI kubernetes-validate; no cluster runs
/// here), and the commands in every manifest — the Job's pods, the GitHub Actions matrix, the launchd agent — are run
/// as written (their placeholders filled in) against a real database.
@Suite("Deploy/", .timeLimit(.minutes(3)))
struct DeployTests {
    /// The repository's Deploy folder.
    static let deploy = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Deploy").path

    /// What a manifest says, read with PyYAML and plistlib: one JSON value.
    static func read(_ expression: String, from file: String) async throws -> Any {
        let script = """
            import json, plistlib, sys, yaml
            path = sys.argv[1]
            if path.endswith(".plist"):
                documents = [plistlib.load(open(path, "rb"))]
            else:
                documents = [d for d in yaml.safe_load_all(open(path)) if d]
            print(json.dumps(\(expression)))
            """
        let text = try await Python.run(
            ["-c", script, "\(deploy)/\(file)"], hint: "PyYAML comes with kubernetes-validate (make test installs it)")
        return try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
    }

    static let suite = """
        workers: 2
        suite:
          command: "echo {id} >> ran"
          scenarios:
            - { id: a }
            - { id: b }
            - { id: c }
            - { id: d }
        """

    @Test("every Kubernetes manifest validates against Kubernetes' schemas, strictly")
    func kubernetesSchemas() async throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: "\(Self.deploy)/kubernetes").filter {
            $0.hasSuffix(".yaml")
        }.sorted()
        #expect(files == ["job.yaml", "postgres.yaml", "secret.yaml"])
        for file in files {
            let output = try await Python.run(
                ["-m", "kubernetes_validate", "--strict", "\(Self.deploy)/kubernetes/\(file)"],
                hint: "kubernetes-validate (make test installs it)")
            #expect(output.contains("passed") && !output.contains("ERROR"), "\(file): \(output)")
        }
    }

    @Test("the Job is an Indexed Job of joining pods that ignores disruptions and never restarts a pod in place")
    func jobContract() async throws {
        let job = try #require(try await Self.read("documents[0]", from: "kubernetes/job.yaml") as? [String: Any])
        let spec = try #require(job["spec"] as? [String: Any])
        #expect(spec["completionMode"] as? String == "Indexed")
        #expect(spec["backoffLimitPerIndex"] as? Int == 2)
        let rules = try #require((spec["podFailurePolicy"] as? [String: Any])?["rules"] as? [[String: Any]])
        #expect(
            rules.contains {
                $0["action"] as? String == "Ignore" && "\($0["onPodConditions"] ?? "")".contains("DisruptionTarget")
            })
        let pod = try #require((spec["template"] as? [String: Any])?["spec"] as? [String: Any])
        #expect(pod["restartPolicy"] as? String == "Never")
        let container = try #require((pod["containers"] as? [[String: Any]])?.first)
        #expect((container["resources"] as? [String: Any])?["requests"] != nil)
        #expect(
            "\(container["env"] ?? "")".contains("secretKeyRef"), "the database URL and password come from the Secret")
    }

    /// Fills `$(NAME)` as Kubernetes does from the container's env and the Job's index.
    static func expand(_ argument: String, _ variables: [String: String]) -> String {
        variables.reduce(argument) { $0.replacingOccurrences(of: "$(\($1.key))", with: $1.value) }
    }

    @Test("the Job's pods, as written: every pod joins one run, each exits with the run's code")
    func jobCommand() async throws {
        let container = try #require(
            try await Self.read(
                "documents[0]['spec']['template']['spec']['containers'][0]", from: "kubernetes/job.yaml")
                as? [String: Any])
        let command = try #require(container["command"] as? [String]) + (try #require(container["args"] as? [String]))
        #expect(command.first == "orchestrate")
        var variables: [String: String] = [:]
        for entry in container["env"] as? [[String: Any]] ?? [] {
            if let name = entry["name"] as? String, let value = entry["value"] as? String { variables[name] = value }
        }
        try await TemporaryDirectory.with { directory in
            try directory.write("orchestrate.yml", Self.suite)
            let cli = OrchestrateCLI(
                directory: directory.path, database: try await TestPostgres.shared.makeDatabaseURL())
            let pods = try (0..<2).map { index in
                var pod = variables
                pod["JOB_COMPLETION_INDEX"] = "\(index)"
                // The metrics port the manifest names may be taken on this machine: the system picks one.
                let arguments = command.dropFirst().map { Self.expand($0, pod) }.map { $0 == "9464" ? "0" : $0 }
                return try cli.launch(Array(arguments), name: "pod-\(index)")
            }
            for (index, pod) in pods.enumerated() {
                let result = cli.output(await pod.wait(), name: "pod-\(index)")
                #expect(result.exitCode == 0, "pod \(index): \(result.stdout)\(result.stderr)")
                // A pod that starts after the others finished the run (a loaded node) says so and exits with its code.
                #expect(
                    result.stdout.contains("4 scenarios, 4 passed")
                        || result.stderr.contains(
                            "is finished and node pod-\(index) ran nothing in it; its exit code is 0"),
                    "\(result.stdout)\(result.stderr)")
            }
            #expect(directory.read("ran").split(separator: "\n").sorted() == ["a", "b", "c", "d"])
        }
    }

    @Test(
        "the GitHub Actions matrix, as written: the nodes join one run, a re-run attempt takes its failures, the report job writes the whole run"
    )
    func githubActions() async throws {
        let jobs = try #require(
            try await Self.read("documents[0]['jobs']", from: "github-actions/orchestrate.yml")
                as? [String: [String: Any]])
        func step(_ job: String, running text: String) throws -> String {
            let steps = try #require(jobs[job]?["steps"] as? [[String: Any]])
            return try #require(steps.compactMap { $0["run"] as? String }.first { $0.contains(text) })
        }
        let node = try step("suite", running: "orchestrate run")
        let report = try step("report", running: "orchestrate report")
        try await TemporaryDirectory.with { directory in
            try directory.write("orchestrate.yml", Self.suite)
            let cli = OrchestrateCLI(
                directory: directory.path, database: try await TestPostgres.shared.makeDatabaseURL())
            let bin = (OrchestrateCLI.executable as NSString).deletingLastPathComponent
            var environment = cli.environment
            environment["PATH"] = "\(bin):\(environment["PATH"] ?? "/usr/bin:/bin")"
            let runID = "\(Int.random(in: 1_000_000...9_999_999))"
            func shell(_ line: String, node: Int, attempt: Int, name: String) throws -> SupervisedProcess {
                let script = line.replacingOccurrences(of: "${{ github.run_id }}", with: runID)
                    .replacingOccurrences(of: "${{ matrix.node }}", with: "\(node)")
                    .replacingOccurrences(of: "${{ github.run_attempt }}", with: "\(attempt)")
                #expect(!script.contains("${{"), "an expression the test does not fill: \(script)")
                var command = SupervisedCommand(
                    executable: "/bin/bash", arguments: ["-c", script], environment: environment,
                    workingDirectory: directory.path,
                    stdoutPath: directory.file("\(name).stdout"), stderrPath: directory.file("\(name).stderr"))
                command.timeout = .seconds(120)
                return try SupervisedProcess.launch(command)
            }
            let nodes = try [1, 2].map { try shell(node, node: $0, attempt: 1, name: "node-\($0)") }
            for (index, process) in nodes.enumerated() {
                let result = cli.output(await process.wait(), name: "node-\(index + 1)")
                #expect(result.exitCode == 0, "node \(index + 1): \(result.stdout)\(result.stderr)")
            }
            let merged = [1, 2].flatMap { ManyHostsTests.testcaseNames(directory.read("junit-\($0).xml")) }
            #expect(merged.sorted() == ["a", "b", "c", "d"], "the nodes' JUnit files, merged")
            let rerun = cli.output(await (try shell(node, node: 1, attempt: 2, name: "rerun")).wait(), name: "rerun")
            #expect(rerun.exitCode == 0 && rerun.stderr.contains("no failures"), "\(rerun.stderr)")
            let whole = cli.output(
                await (try shell(report, node: 0, attempt: 1, name: "report")).wait(), name: "report")
            #expect(whole.exitCode == 0, "\(whole.stderr)")
            #expect(ManyHostsTests.testcaseNames(directory.read("junit.xml")).sorted() == ["a", "b", "c", "d"])
            #expect(directory.read("report.html").contains("<html"))
        }
    }

    @Test("the launchd agent, as written: it serves the runs of its project until it is stopped")
    func launchdAgent() async throws {
        let arguments = try #require(
            try await Self.read("documents[0]['ProgramArguments']", from: "macos/com.example.orchestrate-agent.plist")
                as? [String])
        #expect(arguments.first?.hasSuffix("/orchestrate") == true)
        try await TemporaryDirectory.with { directory in
            // Scenarios that take a moment, so that the agent (looking for work every second) finds the run still
            // going.
            try directory.write(
                "orchestrate.yml",
                Self.suite.replacingOccurrences(of: "echo {id} >> ran", with: "sleep 0.5; echo {id} >> ran"))
            let cli = OrchestrateCLI(
                directory: directory.path, database: try await TestPostgres.shared.makeDatabaseURL())
            // This machine's paths for the Mac's: the config, and a free metrics port.
            var local = Array(arguments.dropFirst())
            if let config = local.firstIndex(of: "--config") { local[config + 1] = directory.file("orchestrate.yml") }
            local = local.map { $0 == "9464" ? "0" : $0 }
            let agent = try cli.launch(local, name: "agent")
            #expect(
                await eventually(timeout: .seconds(30)) {
                    directory.read("agent.stderr").contains("serves the runs of project")
                })
            let planner = try await cli.run(
                ["run", "--join", "fleet-\(UUID().uuidString.prefix(6))", "--workers", "1"], name: "planner")
            #expect(planner.exitCode == 0, "\(planner.stderr)")
            #expect(
                await eventually(timeout: .seconds(30)) {
                    directory.read("agent.stdout").contains("4 scenarios, 4 passed")
                })
            #expect(directory.read("agent.stderr").contains("joined run"), "\(directory.read("agent.stderr"))")
            #expect(directory.read("ran").split(separator: "\n").count == 4)
            agent.terminate()
            let stopped = await agent.wait()
            // SIGTERM between runs ends it at once, as launchd and Kubernetes stop it (not after the grace period, by
            // SIGKILL).
            #expect(stopped.reason == .terminated(status: 130), "\(stopped.reason): \(directory.read("agent.stderr"))")
        }
    }
}
