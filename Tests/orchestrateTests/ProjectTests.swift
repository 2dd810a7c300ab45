import Foundation
import OrchestrateTesting
import Testing

/// Several suites in one database: a scenario id is its project's, with its own history, flakiness and quarantine.
@Suite("Projects sharing a database", .timeLimit(.minutes(2)))
struct ProjectTests {
    @Test("two suites with the same scenario id keep apart their history, expected durations, flakiness and quarantine")
    func separateHistories() async throws {
        try await TemporaryDirectory.with { directory in
            // The folders name the projects (project: defaults to the config's folder); login passes in one, fails in
            // the other.
            try directory.write(
                "shop/orchestrate.yml", "suite:\n  scenarios:\n    - { id: login, command: \"sleep 0.3\" }\n")
            try directory.write(
                "blog/orchestrate.yml", "suite:\n  scenarios:\n    - { id: login, command: \"exit 1\" }\n")
            let database = try await TestPostgres.shared.makeDatabaseURL()
            let shop = OrchestrateCLI(directory: directory.file("shop"), database: database)
            let blog = OrchestrateCLI(directory: directory.file("blog"), database: database)
            for _ in 0..<2 { #expect(try await shop.run(["run", "--progress", "none"]).exitCode == 0) }
            #expect(try await blog.run(["run", "--progress", "none"]).exitCode == 1)

            let shopFlaky = try await shop.run(["flaky", "--format", "json"])
            let lines = try #require(
                try JSONSerialization.jsonObject(with: Data(shopFlaky.stdout.utf8)) as? [[String: Any]])
            #expect(
                lines.count == 1 && lines[0]["attempts"] as? Int == 2 && lines[0]["passed"] as? Int == 2,
                "\(shopFlaky.stdout)")
            let blogHistory = try await blog.run(["history", "login", "--format", "json"])
            let attempts = try #require(
                try JSONSerialization.jsonObject(with: Data(blogHistory.stdout.utf8)) as? [[String: Any]])
            #expect(attempts.map { $0["outcome"] as? String } == ["failed"], "\(blogHistory.stdout)")

            let shopScenarios = try await shop.run(["scenarios", "--format", "json"])
            let blogScenarios = try await blog.run(["scenarios", "--format", "json"])
            #expect(shopScenarios.stdout.contains("\"expected_ms\""), "\(shopScenarios.stdout)")
            #expect(!blogScenarios.stdout.contains("\"expected_ms\""), "never passed in blog: \(blogScenarios.stdout)")

            #expect(try await blog.run(["quarantine", "add", "login"]).exitCode == 0)
            #expect(try await shop.run(["quarantine", "list"]).stdout.contains("no scenario is quarantined"))
            #expect(try await blog.run(["quarantine", "list"]).stdout.contains("login"))

            let listing = try await shop.run(["runs"])
            #expect(listing.stdout.contains(" shop ") && listing.stdout.contains(" blog "), "\(listing.stdout)")
        }
    }
}
