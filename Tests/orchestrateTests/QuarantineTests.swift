import Foundation
import Logging
import OrchestrateTesting
import PostgresNIO
import Store
import Testing

/// `orchestrate quarantine` with an end and an owner, as a team uses it: a broken test put aside until a day, still run
/// and counted, and back to failing runs once the day has passed.
@Suite("Quarantine with an end", .timeLimit(.minutes(5)))
struct QuarantineTests {
    /// A UTC day `offset` days from today, `YYYY-MM-DD`.
    static func day(_ offset: Int) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let date = calendar.date(byAdding: .day, value: offset, to: Date())!
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!)
    }

    @Test(
        "--until and --owner: list shows age, end, owner and the newest outcomes; the scenario keeps running and counting; the first run after its last day fails on it and says the quarantine ended"
    )
    func untilAndOwner() async throws {
        try await TemporaryDirectory.with { directory in
            try directory.write(
                "orchestrate.yml",
                """
                workers: 2
                quarantine: { threshold: off }
                suite:
                  scenarios:
                    - { id: broken-login, command: "exit 1" }
                    - { id: steady, command: "true" }
                """)
            let url = try await TestPostgres.shared.makeDatabaseURL()
            let cli = OrchestrateCLI(directory: directory.path, database: url)
            let first = try await cli.run(["run", "--progress", "none"])
            #expect(first.exitCode == 1, "\(first.stdout)\(first.stderr)")

            // One clear error each, exit 2, nothing stored.
            for (arguments, message) in [
                (["--until", "2027-02-29"], "--until 2027-02-29 is not a date (YYYY-MM-DD"),
                (["--until", "2026-1-01"], "--until 2026-1-01 is not a date"),
                (["--until", "\(Self.day(-1))"], "--until \(Self.day(-1)) is before today (\(Self.day(0)), UTC)"),
                (
                    ["--owner", "eve\u{1b}[2J"],
                    "--owner must be a name of 1 to 200 characters without control characters"
                ),
                (["--owner", " "], "--owner must be a name"),
            ] {
                let refused = try await cli.run(["quarantine", "add", "broken-login"] + arguments)
                #expect(refused.exitCode == 2 && refused.stderr.contains(message), "\(arguments): \(refused.stderr)")
            }
            let misplaced = try await cli.run(["quarantine", "list", "--owner", "alice"])
            #expect(
                misplaced.exitCode == 2 && misplaced.stderr.contains("--owner goes with quarantine add, not list"),
                "\(misplaced.stderr)")
            #expect(try await cli.run(["quarantine", "list"]).stdout.contains("no scenario is quarantined"))

            let tomorrow = Self.day(1)
            let added = try await cli.run([
                "quarantine", "add", "broken", "--until", tomorrow, "--owner", "alice", "--reason",
                "login backend moves",
            ])
            #expect(
                added.exitCode == 0
                    && added.stdout.contains("quarantined broken-login through \(tomorrow) (UTC), owner alice"),
                "\(added.stdout)\(added.stderr)")

            // Quarantined: it still runs, its failure is reported and not fatal.
            let second = try await cli.run(["run", "--progress", "none"])
            #expect(second.exitCode == 0, "\(second.stdout)\(second.stderr)")
            #expect(second.stdout.contains("broken-login  failing (quarantined: not fatal)"), "\(second.stdout)")
            let table = try await cli.run(["quarantine", "list"])
            let row = try #require(
                table.stdout.split(separator: "\n").first { $0.hasPrefix("broken-login") }, "\(table.stdout)")
            #expect(
                row.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
                    == ["broken-login", "today", tomorrow, "alice", "hand", "login", "backend", "moves", "FF"],
                "\(table.stdout)")
            #expect(table.stdout.contains("LAST: the newest 5 outcomes, oldest first"), "\(table.stdout)")
            let json = try await cli.run(["quarantine", "list", "--format", "json"])
            let entries = try #require(
                try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]], "\(json.stdout)")
            #expect(entries.count == 1)
            #expect(entries.first?["until"] as? String == tomorrow)
            #expect(entries.first?["owner"] as? String == "alice")
            #expect(entries.first?["last_outcomes"] as? [String] == ["failed", "failed"])
            // Its results keep counting in its flakiness score.
            let flaky = try await cli.run(["flaky", "--format", "json"])
            let lines = try #require(
                try JSONSerialization.jsonObject(with: Data(flaky.stdout.utf8)) as? [[String: Any]], "\(flaky.stdout)")
            let login = try #require(lines.first { $0["scenario_id"] as? String == "broken-login" }, "\(lines)")
            #expect(login["attempts"] as? Int == 2 && login["quarantined"] as? Bool == true, "\(login)")

            // Its last day passes (two days ago): the next run is not shielded by it, and its judge takes it out.
            let lastDay = Self.day(-2)
            _ = try await Database.with(try DatabaseEndpoint(url: url), logger: .init(label: "test")) { database in
                try await database.client.query(
                    "UPDATE quarantine SET until = \(lastDay)::date", logger: database.logger)
            }
            let third = try await cli.run(["run", "--progress", "none"])
            #expect(third.exitCode == 1, "after its last day its failure fails the run: \(third.stdout)")
            #expect(
                third.stderr.contains(
                    #"quarantine ended: broken-login (its last day \#(lastDay), owner alice, "login backend moves"): its failures fail runs again"#
                ),
                "\(third.stderr)")
            #expect(try await cli.run(["quarantine", "list"]).stdout.contains("no scenario is quarantined"))
            let fourth = try await cli.run(["run", "--progress", "none"])
            #expect(fourth.exitCode == 1 && !fourth.stderr.contains("quarantine ended"), "said once: \(fourth.stderr)")
        }
    }
}
