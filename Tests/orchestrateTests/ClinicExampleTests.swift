import Foundation
import OrchestrateTesting
import Testing

/// Examples/clinic as `make demo` runs it: recorded once against the real backend, then replayed.
@Suite("The clinic example")
struct ClinicExampleTests {
    /// The repository's root, from this file's place in Tests/orchestrateTests.
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    /// Where the build put orchestrate, clinic-backend and clinic-scenarios.
    static let binaries = URL(fileURLWithPath: OrchestrateCLI.executable).deletingLastPathComponent().path

    /// clinic-backend on a free port, its request log in a file.
    final class Backend {
        let process = Process()
        let log: String
        private(set) var port = 0

        /// `environment` adds to this process's (CLINIC_CHAT_ANSWER=SURE changes the bot's answer option).
        init(log: String, environment: [String: String] = [:]) throws {
            self.log = log
            _ = FileManager.default.createFile(atPath: log, contents: nil)
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            process.executableURL = URL(fileURLWithPath: "\(ClinicExampleTests.binaries)/clinic-backend")
            process.arguments = ["--port", "0"]
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
            try process.run()
        }

        func started() async throws {
            let up = await eventually {
                guard let line = self.lines.first(where: { $0.hasPrefix("clinic-backend listening on ") }) else {
                    return false
                }
                self.port = Int(line.split(separator: " ").last!)!
                return true
            }
            try #require(up, "clinic-backend did not start: \(lines)")
        }

        var lines: [String] {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }
        /// Requests it answered.
        var requests: [String] { lines.filter { !$0.hasPrefix("clinic-backend") } }

        func stop() {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
        }
    }

    /// The example's features (copied once) and its configuration pointed at this build and at the backend on
    /// `backendPort`.
    static func project(in directory: TemporaryDirectory, backendPort: Int) throws {
        if !FileManager.default.fileExists(atPath: directory.file("Features")) {
            try FileManager.default.copyItem(
                atPath: "\(Self.repository)/Examples/clinic/Features", toPath: directory.file("Features"))
        }
        // The example's own configuration, pointed at this build and this backend.
        let config = try String(contentsOfFile: "\(Self.repository)/Examples/clinic/orchestrate.yml", encoding: .utf8)
            .replacingOccurrences(of: "../../.build/debug/clinic-scenarios", with: "\(Self.binaries)/clinic-scenarios")
            .replacingOccurrences(of: "http://127.0.0.1:8642", with: "http://127.0.0.1:\(backendPort)")
        try directory.write("orchestrate.yml", config)
    }

    @Test(
        "recorded once, the replay makes zero requests to the backend and every step has its timing and exchanges in PostgreSQL"
    )
    func recordThenReplay() async throws {
        try await TemporaryDirectory.with { directory in
            let backend = try Backend(log: directory.file("backend.log"))
            defer { backend.stop() }
            try await backend.started()
            try Self.project(in: directory, backendPort: backend.port)
            let cli = OrchestrateCLI(
                directory: directory.path, database: try await TestPostgres.shared.makeDatabaseURL())

            let record = try await cli.run(["run", "--mode", "record", "--workers", "8", "--progress", "none"])
            #expect(record.exitCode == 0, "\(record.stdout)\(record.stderr)")
            let recorded = backend.requests
            #expect(
                recorded.contains("GET /v1/news 500"), "the news service failed once and the app retried: \(recorded)")
            #expect(recorded.contains("POST /v1/users 409"))
            #expect(
                FileManager.default.fileExists(
                    atPath: directory.file("Recordings/Features/chat/The_bot_offers_to_book_an_appointment.har")))

            // The backend keeps running: a replay that reached it would show in its log.
            let replay = try await cli.run(["run", "--workers", "8", "--progress", "none"])
            #expect(replay.exitCode == 0, "\(replay.stdout)\(replay.stderr)")
            #expect(backend.requests == recorded)
            backend.stop()

            let database = try #require(cli.environment["ORCHESTRATE_DATABASE_URL"])
            let lastRun = "(SELECT id FROM runs ORDER BY created_at DESC LIMIT 1)"
            let steps = try await queryRows(
                database,
                """
                SELECT s.keyword || s.name, s.status, extract(epoch FROM s.finished_at - s.started_at)::float8,
                       (SELECT count(*)::int FROM exchange_log e WHERE e.attempt_id = s.attempt_id AND e.step = s.position)
                FROM steps s JOIN attempts a ON a.id = s.attempt_id WHERE a.run_id = \(lastRun)
                ORDER BY a.scenario_id, s.position
                """, as: (String, String, Double, Int32).self)
            let exchanges = try await queryRows(
                database,
                """
                SELECT e.mode, e.matched, e.status FROM exchanges e JOIN attempts a ON a.id = e.attempt_id WHERE a.run_id = \(lastRun)
                """, as: (String, Bool, Int32?).self)
            // 8 scenarios, 25 steps, every one passed, timed and attributed.
            #expect(steps.count == 25)
            #expect(steps.allSatisfy { $0.1 == "passed" && $0.2 >= 0 })
            #expect(steps.filter { $0.0 == "Given I open the app" }.allSatisfy { $0.3 >= 1 })
            #expect(steps.contains { $0.0 == "When I tell the bot \"I need an appointment\"" && $0.3 == 1 })
            #expect(exchanges.count == recorded.count)
            #expect(exchanges.allSatisfy { $0.0 == "replay" && $0.1 }, "\(exchanges)")
            #expect(exchanges.filter { $0.2 == 500 }.count == recorded.filter { $0.hasSuffix(" 500") }.count)

            let history = try await cli.run(["history", "bot offers", "--format", "json"])
            let attempts = try #require(
                try JSONSerialization.jsonObject(with: Data(history.stdout.utf8)) as? [[String: Any]],
                "\(history.stderr)")
            #expect(attempts.map { $0["mode"] as? String } == ["replay", "record"])
            #expect((attempts.first?["steps"] as? [[String: Any]])?.count == 4)
        }
    }

    @Test("a replay hands the scenario its recording's frozen clock and seed; live gets the run's own")
    func frozenClock() async throws {
        try await TemporaryDirectory.with { directory in
            try directory.write(
                "orchestrate.yml",
                """
                suite:
                  scenarios:
                    - { id: clock, command: "echo \\"now=$ORCHESTRATE_NOW seed=$ORCHESTRATE_SEED\\"" }
                mock:
                  hosts: { api.test: "http://127.0.0.1:9" }
                """)
            let cli = OrchestrateCLI(
                directory: directory.path, database: try await TestPostgres.shared.makeDatabaseURL())
            var outputs: [String] = []
            var lastEnd: Date?
            for mode in ["record", "replay", "live"] {
                // Each run starts in a later second than the one before ended, so that their clocks differ.
                if let lastEnd {
                    #expect(await eventually { Int(Date().timeIntervalSince1970) > Int(lastEnd.timeIntervalSince1970) })
                }
                let run = try await cli.run(["run", "--mode", mode, "--progress", "none"])
                lastEnd = Date()
                #expect(run.exitCode == 0, "\(run.stdout)\(run.stderr)")
                let history = try await cli.run(["history", "clock", "--limit", "1", "--format", "json"])
                let attempts = try #require(
                    try JSONSerialization.jsonObject(with: Data(history.stdout.utf8)) as? [[String: Any]])
                outputs.append(try #require(attempts.first?["started_at"] as? String))
            }
            // The attempts' own output is what the scenario saw.
            let database = try #require(cli.environment["ORCHESTRATE_DATABASE_URL"])
            let seen = try await queryRows(database, "SELECT stdout FROM attempts ORDER BY id", as: String.self)
                .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            #expect(seen.count == 3)
            #expect(seen[1] == seen[0], "replay sees the recording's clock and seed")
            #expect(
                seen[2] != seen[0] && seen[2].hasSuffix(String(seen[0].split(separator: " ").last!)),
                "live has its own clock, the same seed: \(seen)"
            )
        }
    }
}
