import Foundation
import OrchestrateTesting
import Testing

/// A command finds its project as git finds a repository, and a command that only reads history never makes a
/// database where there is none.
@Suite("Finding the project", .timeLimit(.minutes(3)))
struct ProjectDiscoveryTests {
    /// The CLI in `directory` with no database but the embedded cluster of the project it finds.
    static let config = """
        suite:
          list: "printf 'alpha\\\\nbeta\\\\n'"
          command: "true"
        """

    @Test("a command in a folder below the config reads that config, and --config wins over it")
    func foundAbove() async throws {
        let database = try await TestPostgres.shared.makeDatabaseURL()
        try await TemporaryDirectory.with { directory in
            try directory.write("orchestrate.yml", Self.config)
            try FileManager.default.createDirectory(
                atPath: directory.file("src/deep"), withIntermediateDirectories: true)
            try directory.write("src/other.yml", "suite:\n  scenarios:\n    - { id: gamma, command: \"true\" }\n")
            let below = OrchestrateCLI(directory: directory.file("src/deep"), database: database)
            let listed = try await below.run(["scenarios", "--format", "json"])
            #expect(listed.exitCode == 0, "\(listed.stderr)")
            #expect(listed.stdout.contains("\"alpha\"") && listed.stdout.contains("\"beta\""), "\(listed.stdout)")
            let chosen = try await below.run(["scenarios", "--format", "json", "--config", "../other.yml"])
            #expect(chosen.exitCode == 0, "\(chosen.stderr)")
            #expect(chosen.stdout.contains("\"gamma\"") && !chosen.stdout.contains("\"alpha\""), "\(chosen.stdout)")
            // A run from below works in the config's folder: its files land there, not in the folder it was started in.
            let run = try await below.run(["run", "--progress", "none"])
            #expect(run.exitCode == 0, "\(run.stderr)")
            #expect(FileManager.default.fileExists(atPath: directory.file(".orchestrate/reports")))
            #expect(!FileManager.default.fileExists(atPath: directory.file("src/deep/.orchestrate")))
        }
    }

    @Test(
        "a config found above that another user owns is refused; none is looked for at or above a folder anyone may write to",
        .enabled(if: geteuid() == 0, "needs root to give a file to another user"))
    func othersConfigs() async throws {
        try await TemporaryDirectory.with { directory in
            try directory.write("orchestrate.yml", Self.config)
            try FileManager.default.createDirectory(atPath: directory.file("sub"), withIntermediateDirectories: true)
            let below = OrchestrateCLI.embedded(in: directory.file("sub"))
            #expect(chown(directory.file("orchestrate.yml"), 65534, 65534) == 0)
            let refused = try await below.run(["scenarios"])
            #expect(refused.exitCode == 2, "\(refused.stdout)\(refused.stderr)")
            #expect(refused.stderr.contains("belongs to another user (uid 65534)"), "\(refused.stderr)")
            #expect(refused.stderr.contains("--config"), "\(refused.stderr)")
            // Named, it is used: the user chose it.
            let named = try await below.run(["scenarios", "--config", "../orchestrate.yml"])
            #expect(named.exitCode == 0 && named.stdout.contains("alpha"), "\(named.stderr)")
            // Back to root's, but in a folder anybody may write to: not looked in from below.
            #expect(chown(directory.file("orchestrate.yml"), 0, 0) == 0)
            #expect(chmod(directory.path, 0o1777) == 0)
            let unseen = try await below.run(["scenarios"])
            #expect(
                unseen.exitCode == 2 && unseen.stderr.contains("no such file here or in a folder above"),
                "\(unseen.stderr)")
            #expect(chmod(directory.path, 0o755) == 0)
        }
    }

    @Test("with no config and no database, a command that reads history says so, exits 2 and makes nothing")
    func nothingToRead() async throws {
        try await TemporaryDirectory.with { directory in
            let cli = OrchestrateCLI.embedded(in: directory.path)
            for arguments in [
                ["runs"], ["flaky"], ["history", "alpha"], ["logs", UUID().uuidString, "alpha"],
                ["report", UUID().uuidString], ["artifacts", UUID().uuidString, "alpha", "--out", "kept"],
                ["quarantine", "list"], ["scenarios"],
            ] {
                let result = try await cli.run(arguments)
                #expect(result.exitCode == 2, "\(arguments): \(result.stderr)")
                #expect(result.stderr.contains("orchestrate.yml"), "\(arguments): \(result.stderr)")
                #expect(result.stderr.contains("orchestrate init"), "\(arguments): \(result.stderr)")
                #expect(result.stderr.split(separator: "\n").count == 1, "one line: \(result.stderr)")
            }
            #expect(!FileManager.default.fileExists(atPath: directory.file(".orchestrate")), "no cluster was made")
        }
    }

    @Test("the embedded cluster is made by the first command that writes, which says where it is and how to stop it")
    func firstStartSaysWhere() async throws {
        try await TemporaryDirectory.with { directory in
            try directory.write("orchestrate.yml", Self.config)
            let cli = OrchestrateCLI.embedded(in: directory.path)
            let before = try await cli.run(["runs"])
            #expect(before.exitCode == 2 && before.stderr.contains("no history yet"), "\(before.stderr)")
            #expect(!FileManager.default.fileExists(atPath: directory.file(".orchestrate/postgres")))
            let listed = try await cli.run(["scenarios"])
            #expect(listed.exitCode == 0 && listed.stdout.contains("alpha"), "\(listed.stdout)\(listed.stderr)")
            do {
                let first = try await cli.run(["run", "--progress", "none"])
                #expect(first.exitCode == 0, "\(first.stderr)")
                #expect(first.stderr.contains("made orchestrate's own PostgreSQL in"), "\(first.stderr)")
                #expect(first.stderr.contains("orchestrate db stop"), "\(first.stderr)")
                let second = try await cli.run(["runs"])
                #expect(second.exitCode == 0, "\(second.stderr)")
                #expect(!second.stderr.contains("made orchestrate's own PostgreSQL"), "said once: \(second.stderr)")
            } catch {
                _ = try await cli.run(["db", "stop"])
                throw error
            }
            let stopped = try await cli.run(["db", "stop"])
            #expect(stopped.exitCode == 0, "\(stopped.stderr)")
        }
    }
}
