import Foundation
import OrchestrateModel
import OrchestrateTesting
import Orchestrator
import Store
import Testing

@Suite("A run's settings, resolved once")
struct RunSettingsTests {
    static func settings(_ yaml: String, _ change: (inout RunOptions) -> Void = { _ in }) async throws -> RunSettings {
        try await TemporaryDirectory.with { directory in
            try directory.write("orchestrate.yml", yaml)
            var options = RunOptions()
            options.configPath = directory.file("orchestrate.yml")
            change(&options)
            return try RunSettings.resolve(options, environment: [:], currentDirectory: directory.path)
        }
    }

    @Test(
        "a flag wins over orchestrate.yml, which wins over the default; each value says where it came from, to the line"
    )
    func sources() async throws {
        let yaml = """
            workers: 3
            lease: 45s
            mock:
              recordings: Tapes
              mode: live
            suite:
              scenarios:
                - { id: one, command: "true" }
            """
        let fromFile = try await Self.settings(yaml)
        #expect(fromFile.workers.value == 3 && fromFile.workers.source.description.hasSuffix("orchestrate.yml:1"))
        #expect(
            fromFile.lease.value == .seconds(45) && fromFile.lease.source.description.hasSuffix("orchestrate.yml:2"))
        #expect(fromFile.mode.value == .live && fromFile.mode.source.description.hasSuffix("orchestrate.yml:5"))
        #expect(fromFile.retries.value == 0 && fromFile.retries.source == .standard("none"))
        #expect(
            fromFile.reports.value.hasSuffix("/.orchestrate/reports")
                && fromFile.reports.source == .standard(".orchestrate/reports"))
        #expect(fromFile.recordings.hasSuffix("/Tapes"))
        #expect(fromFile.role == .plan)

        let fromFlags = try await Self.settings(yaml) { options in
            options.workers = 5
            options.mode = .compare
            options.retries = 2
            options.reportsDirectory = "out"
        }
        #expect(fromFlags.workers.value == 5 && fromFlags.workers.source == .flag("--workers"))
        #expect(fromFlags.mode.value == .compare && fromFlags.mode.source == .flag("--mode"))
        #expect(fromFlags.retries.value == 2 && fromFlags.retries.source == .flag("--retries"))
        // A relative --reports starts at the config's folder, as reports: in the file does.
        #expect(fromFlags.reports.value.hasSuffix("/out") && fromFlags.reports.source == .flag("--reports"))
    }

    @Test("the database: --database, else ORCHESTRATE_DATABASE_URL, else orchestrate.yml, else the embedded cluster")
    func database() async throws {
        let yaml = "database: postgres://file@localhost/suite\nsuite: { scenarios: [{ id: one, command: \"true\" }] }\n"
        let configured = try await Self.settings(yaml).database
        #expect(configured.source == .config, "\(configured.source) \(configured.endpoint)")
        let flagged = try await Self.settings(yaml) { $0.database = "postgres://flag@localhost/suite" }
        #expect(flagged.database.source == .flag && flagged.database.endpoint.description.contains("flag@"))
        let embedded = try await Self.settings("suite: { scenarios: [{ id: one, command: \"true\" }] }\n")
        #expect(embedded.database.source == .embedded && embedded.database.cluster != nil)
    }

    @Test("what the process does: plan, resume, join, attach or serve; only a planner needs orchestrate.yml")
    func roles() async throws {
        let yaml = "suite: { scenarios: [{ id: one, command: \"true\" }] }\n"
        let id = UUID()
        #expect(try await Self.settings(yaml) { $0.resume = id }.role == .resume(id))
        #expect(try await Self.settings(yaml) { $0.joinKey = "ci-1" }.role == .join(key: "ci-1", agent: false))
        #expect(
            try await Self.settings(yaml) { ($0.joinKey, $0.agent) = ("ci-1", true) }.role
                == .join(key: "ci-1", agent: true))
        #expect(try await Self.settings(yaml) { ($0.agent, $0.attach) = (true, id) }.role == .attach(id))
        #expect(try await Self.settings(yaml) { ($0.agent, $0.forever) = (true, true) }.role == .serve)
        var missing = RunOptions()
        missing.configPath = "/nonexistent/orchestrate.yml"
        #expect(throws: ConfigError.self) { try RunSettings.resolve(missing, environment: [:]) }
        missing.agent = true
        missing.attach = id
        #expect(try RunSettings.resolve(missing, environment: [:]).role == .attach(id))
    }
}
