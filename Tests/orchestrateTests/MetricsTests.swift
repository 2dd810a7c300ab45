import Foundation
import OrchestrateModel
import OrchestrateTesting
import ProcessSupervisor
import Testing

/// `--metrics-port`: what a coordinator serves Prometheus, checked by Prometheus's own `promtool check metrics`.
@Suite("Prometheus metrics", .timeLimit(.minutes(2)))
struct MetricsTests {
    /// `COMMAND ARGUMENTS…` (looked up on PATH), its stdout; standard input is the text given.
    /// `command arguments…` with `input`, waited for on a thread of its own.
    static func run(_ command: String, _ arguments: [String], input: String = "") async throws -> (status: Int32, output: String) {
        try await blockingOffPool { try blockingRun(command, arguments, input: input) }
    }

    static func blockingRun(_ command: String, _ arguments: [String], input: String = "") throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [command] + arguments
        let output = Pipe()
        let standardInput = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = standardInput
        try process.run()
        standardInput.fileHandleForWriting.write(Data(input.utf8))
        try standardInput.fileHandleForWriting.close()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }

    @Test("a run serves slots, outcomes, queue depth and claim latency, in an exposition promtool accepts")
    func exposition() async throws {
        try await TemporaryDirectory.with { directory in
            try directory.write(
                "orchestrate.yml",
                """
                workers: 2
                suite:
                  command: "true"
                  scenarios:
                    - { id: slow, command: "touch started; for i in $(seq 300); do test -f go && exit 0; sleep 0.1; done; exit 1" }
                    - { id: a }
                    - { id: b }
                    - { id: fails, command: "exit 3" }
                """)
            let cli = OrchestrateCLI(directory: directory.path, database: try await TestPostgres.shared.makeDatabaseURL())
            let run = try cli.launch(["run", "--metrics-port", "0", "--progress", "none"], name: "run")
            let port = try #require(
                await eventuallyValue(timeout: .seconds(30)) {
                    directory.read("run.stderr").components(separatedBy: "/metrics")[0].split(separator: ":").last.flatMap { Int($0) }
                }, "\(directory.read("run.stderr"))")
            let metrics = try #require(
                await eventuallyValue(timeout: .seconds(30)) { () -> String? in
                    guard FileManager.default.fileExists(atPath: directory.file("started")),
                        let text = try? await Self.run("curl", ["-sf", "http://127.0.0.1:\(port)/metrics"]).output,
                        text.contains("orchestrate_attempts_total{outcome=\"failed\"} 1"),
                        text.contains("orchestrate_attempts_total{outcome=\"passed\"} 2")
                    else { return nil }
                    return text
                })
            #expect(metrics.contains("orchestrate_slots{state=\"busy\"} 1\norchestrate_slots{state=\"idle\"} 1"), "\(metrics)")
            #expect(metrics.contains("orchestrate_claims_total 4"), "\(metrics)")
            #expect(!metrics.contains("orchestrate_claim_latency_seconds_count 0\n"), "\(metrics)")
            #expect(metrics.contains("# TYPE orchestrate_claim_latency_seconds histogram"))
            let check = try await Self.run("promtool", ["check", "metrics"], input: metrics)
            #expect(check.status == 0, "promtool check metrics (Debian's prometheus package; make test installs it): \(check.output)")
            try directory.write("go", "")
            let result = cli.output(await run.wait(), name: "run")
            #expect(result.exitCode == 1, "\(result.stderr)")
            let refused = try await cli.run(["run", "--metrics-port", "70000"], name: "refused")
            #expect(refused.exitCode == 2 && refused.stderr.contains("--metrics-port must be from 0 to 65535"), "\(refused.stderr)")
        }
    }
}
