import Foundation
import OrchestrateModel
import OrchestrateTesting
import ProcessSupervisor
import Testing

#if canImport(Glibc)
import Glibc

private let RLIMIT_NOFILE_VALUE = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
#endif

/// `--metrics-port`: what a coordinator serves Prometheus, checked by Prometheus's own `promtool check metrics`.
@Suite("Prometheus metrics", .timeLimit(.minutes(2)))
struct MetricsTests {
    /// `COMMAND ARGUMENTS…` (looked up on PATH), its stdout; standard input is the text given.
    /// `command arguments…` with `input`, waited for on a thread of its own.
    static func run(
        _ command: String, _ arguments: [String], input: String = ""
    ) async throws -> (status: Int32, output: String) {
        try await blockingOffPool { try blockingRun(command, arguments, input: input) }
    }

    static func blockingRun(
        _ command: String, _ arguments: [String], input: String = ""
    ) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [command] + arguments
        let output = Pipe()
        let standardInput = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = standardInput
        try process.run()
        // A checker that exits before reading all of it closes the pipe: a failed write, not a trap.
        try? standardInput.fileHandleForWriting.write(contentsOf: Data(input.utf8))
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
            let cli = OrchestrateCLI(
                directory: directory.path, database: try await TestPostgres.shared.makeDatabaseURL())
            let run = try cli.launch(["run", "--metrics-port", "0", "--progress", "none"], name: "run")
            let port = try #require(
                await eventuallyValue(timeout: .seconds(30)) {
                    directory.read("run.stderr").components(separatedBy: "/metrics")[0].split(separator: ":").last
                        .flatMap { Int($0) }
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
            #expect(
                metrics.contains("orchestrate_slots{state=\"busy\"} 1\norchestrate_slots{state=\"idle\"} 1"),
                "\(metrics)")
            #expect(metrics.contains("orchestrate_claims_total 4"), "\(metrics)")
            #expect(!metrics.contains("orchestrate_claim_latency_seconds_count 0\n"), "\(metrics)")
            #expect(metrics.contains("# TYPE orchestrate_claim_latency_seconds histogram"))
            let check = try await Self.run("promtool", ["check", "metrics"], input: metrics)
            #expect(
                check.status == 0,
                "promtool check metrics (Debian's prometheus package; make test installs it): \(check.output)")
            try directory.write("go", "")
            let result = cli.output(await run.wait(), name: "run")
            #expect(result.exitCode == 1, "\(result.stderr)")
            let refused = try await cli.run(["run", "--metrics-port", "70000"], name: "refused")
            #expect(
                refused.exitCode == 2 && refused.stderr.contains("--metrics-port must be from 0 to 65535"),
                "\(refused.stderr)")
        }
    }

    @Test(
        "1,000 idle connections to the metrics port: a scrape is answered, orchestrate holds at most 64, idle ones are closed; loopback only"
    )
    func idleConnections() async throws {
        try await TemporaryDirectory.with { directory in
            try directory.write(
                "orchestrate.yml",
                """
                suite:
                  scenarios:
                    - { id: waits, command: "for i in $(seq 600); do test -f go && exit 0; sleep 0.1; done; exit 1" }
                """)
            let cli = OrchestrateCLI(
                directory: directory.path, database: try await TestPostgres.shared.makeDatabaseURL())
            // As the issue found it: a process allowed 1,024 descriptors.
            var command = SupervisedCommand.shell(
                "ulimit -n 1024 && exec \(ShellWord.quote(OrchestrateCLI.executable)) run --metrics-port 0 --progress none",
                environment: cli.environment)
            command.workingDirectory = directory.path
            command.stdoutPath = directory.file("run.stdout")
            command.stderrPath = directory.file("run.stderr")
            command.timeout = .seconds(150)
            let run = try SupervisedProcess.launch(command)
            let port = try #require(
                await eventuallyValue(timeout: .seconds(30)) {
                    directory.read("run.stderr").components(separatedBy: "/metrics")[0].split(separator: ":").last
                        .flatMap { Int($0) }
                }, "\(directory.read("run.stderr"))")
            #expect(directory.read("run.stderr").contains("metrics for Prometheus at http://127.0.0.1:\(port)/metrics"))
            // Listening on loopback alone (/proc/net/tcp: 0100007F is 127.0.0.1, 0A is LISTEN).
            let listening = try String(contentsOfFile: "/proc/net/tcp", encoding: .utf8).split(separator: "\n")
                .filter { $0.contains(String(format: ":%04X ", port)) && $0.split(separator: " ")[3] == "0A" }
            #expect(
                listening.count == 1 && listening[0].contains(String(format: "0100007F:%04X", port)), "\(listening)")

            // A thousand connections that never say anything.
            var limit = rlimit()
            getrlimit(RLIMIT_NOFILE_VALUE, &limit)
            limit.rlim_cur = max(limit.rlim_cur, min(limit.rlim_max, 4096))
            setrlimit(RLIMIT_NOFILE_VALUE, &limit)
            var idle: [Int32] = []
            defer { for socket in idle { close(socket) } }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            for _ in 0..<1000 {
                let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
                guard socket >= 0 else { break }
                _ = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
                idle.append(socket)
            }
            #expect(idle.count == 1000)
            // Every one of them gets through the handshake (the server takes them from its backlog), as a real attack's
            // do.
            func established() -> Int {
                var polled = idle.map { pollfd(fd: $0, events: Int16(POLLOUT), revents: 0) }
                _ = poll(&polled, nfds_t(polled.count), 0)
                return polled.count { $0.revents & Int16(POLLOUT) != 0 }
            }
            #expect(
                await eventually(timeout: .seconds(60)) { established() == idle.count }, "established: \(established())"
            )
            let pid = try #require(run.pid)
            func descriptors() -> Int {
                (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
            }
            // A scrape is answered while they are open, and orchestrate holds no more than the cap of them.
            let scraped = await eventually(timeout: .seconds(30)) {
                (try? await Self.run("curl", ["-sf", "--max-time", "10", "http://127.0.0.1:\(port)/metrics"]).output)?
                    .contains("orchestrate_slots")
                    == true
            }
            #expect(scraped, "the metrics endpoint stopped answering")
            #expect(descriptors() < 400, "orchestrate holds \(descriptors()) descriptors")
            // Idle connections are closed after their 10 s: the server's ends go away.
            let before = descriptors()
            #expect(
                await eventually(timeout: .seconds(40)) { descriptors() < before - 32 },
                "idle connections stay open: \(descriptors())")
            try directory.write("go", "")
            let result = cli.output(await run.wait(), name: "run")
            #expect(result.exitCode == 0, "\(result.stderr)")
        }
    }
}
