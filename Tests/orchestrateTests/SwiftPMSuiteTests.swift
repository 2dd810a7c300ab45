import Foundation
import OrchestrateTesting
import ProcessSupervisor
import Testing

/// `suite.swiftpm`: a Swift package's XCTest and Swift Testing tests, built once, listed by `swift test list`, run in
/// batches by the package's test binary.
@Suite("suite.swiftpm: a Swift package's tests as they are", .timeLimit(.minutes(5)))
struct SwiftPMSuiteTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "Fixtures/swiftpm-suite"
    ).path

    /// The fixture package without a build of it (`cd Examples/swiftpm && orchestrate run` leaves one there).
    static func copyFixture(to path: String) throws {
        try FileManager.default.copyItem(atPath: fixture, toPath: path)
        try? FileManager.default.removeItem(atPath: "\(path)/.build")
    }

    @Test("every XCTest and Swift Testing test is a scenario with its own result, file:line, retry and JUnit names")
    func package() async throws {
        try await TemporaryDirectory.with { directory in
            try Self.copyFixture(to: directory.file("shop"))
            // Batches of 3 as they come, not sized from the listing's time (which a loaded machine stretches): which
            // tests share a process with the one that crashes it decides what runs again alone.
            try directory.write(
                "shop/orchestrate.yml",
                """
                workers: 2
                retries: 1
                suite:
                  swiftpm:
                    package: .
                  batch: { size: 3, auto: false }
                mock: { mode: live }
                """)
            let cli = OrchestrateCLI(
                directory: directory.file("shop"), database: try await TestPostgres.shared.makeDatabaseURL())
            let listed = try await cli.run(["scenarios"])
            #expect(listed.exitCode == 0, "\(listed.stderr)")
            // The ids SwiftPM itself lists.
            var list = SupervisedCommand(
                executable: "/bin/sh", arguments: ["-c", "swift test list --skip-build 2>/dev/null"],
                environment: ProcessInfo.processInfo.environment,
                workingDirectory: directory.file("shop"), stdoutPath: directory.file("list.stdout"), stderrPath: nil)
            list.timeout = .seconds(120)
            _ = try await SupervisedProcess.run(list)
            let swift = try String(contentsOfFile: directory.file("list.stdout"), encoding: .utf8)
            let ids = swift.split(separator: "\n").map(String.init).filter { $0.hasPrefix("ShopTests.") }
            #expect(ids.count == 10, "\(swift)")
            for id in ids { #expect(listed.stdout.contains(id), "\(id) in \(listed.stdout)") }

            let run = try await cli.run(["run", "--progress", "none"])
            #expect(run.exitCode == 1, "\(run.stdout)\(run.stderr)")
            #expect(run.stdout.contains("10 scenarios, 6 passed, 1 flaky, 3 failed"), "\(run.stdout)")
            let runID = try #require(run.stdout.split(separator: " ").dropFirst().first.map(String.init))
            // XCTest's failure and Swift Testing's, each with its file:line.
            let xctest = try await cli.run(["logs", runID, "ShopTests.CartTests/testTotal"])
            #expect(
                xctest.stdout.contains("Tests/ShopTests/CartTests.swift:16: XCTAssertEqual failed"), "\(xctest.stdout)")
            let swiftTesting = try await cli.run(["logs", runID, "ShopTests.PriceTests/total()"])
            #expect(swiftTesting.stdout.contains("Tests/ShopTests/PriceTests.swift:20:"), "\(swiftTesting.stdout)")
            #expect(swiftTesting.stdout.contains("seven is not eight"), "\(swiftTesting.stdout)")
            #expect(run.stdout.contains("ShopTests.CartTests/testFlaky"), "the flaky test is named: \(run.stdout)")
            // The crashing test failed by its crash; the tests of its batch that it took down ran again alone and
            // passed.
            let crash = try await cli.run(["logs", runID, "ShopTests.CartTests/testCrash"])
            #expect(crash.stdout.contains("crashed"), "\(crash.stdout)")
            // Tests shared processes.
            let pids = try await queryRows(
                cli.environment["ORCHESTRATE_DATABASE_URL"]!,
                "SELECT count(DISTINCT pid) FROM attempts WHERE state = 'finished' AND attempt = 1", as: Int64.self)
            #expect((pids.first ?? 10) < 10, "batches: \(pids)")
            // SwiftPM's names in the JUnit report.
            let junit = try String(
                contentsOfFile: directory.file("shop/.orchestrate/reports/\(runID)/junit.xml"), encoding: .utf8)
            #expect(junit.contains(#"name="testTotal" classname="ShopTests.CartTests""#), "\(junit)")
            #expect(junit.contains(#"name="total()" classname="ShopTests.PriceTests""#), "\(junit)")
            #expect(junit.contains(#"name="free()" classname="ShopTests""#), "\(junit)")

            // A test whose report says it passed while its process exits 1 (nothing reported failed): its batch's
            // passes run again alone, and alone the same evidence fails it, saying why. The tests are built already.
            try directory.write(
                "shop/orchestrate.yml",
                """
                workers: 1
                suite:
                  swiftpm: { package: ., build: false, filter: "discount|free|passesThenExits" }
                  batch: { size: 3, auto: false }
                  env: { SHOP_EXIT_AFTER_PASSING: "1" }
                mock: { mode: live }
                """)
            let exits = try await cli.run(["run", "--progress", "none"])
            #expect(exits.exitCode == 1, "\(exits.stdout)\(exits.stderr)")
            #expect(exits.stdout.contains("3 scenarios, 2 passed, 1 failed"), "\(exits.stdout)")
            let exitsID = try #require(exits.stdout.split(separator: " ").dropFirst().first.map(String.init))
            let exiter = try await cli.run(["logs", exitsID, "ShopTests.passesThenExits()"])
            #expect(
                exiter.stdout.contains("its report says it passed, but its process did not end well"),
                "\(exiter.stdout)")

            // Batches sized by orchestrate, without history (a project of its own): Swift Testing runs a process's
            // tests in parallel itself, so its tests are sized for one process, run without naming them. Two slots work
            // (one per suite kind); asking in the same round, each may take one of them to head a process.
            try directory.write(
                "shop/orchestrate.yml",
                """
                project: shop-sized
                workers: 4
                suite:
                  swiftpm: { package: ., build: false }
                mock: { mode: live }
                """)
            let sized = try await cli.run(["run", "--progress", "none", "--verbose"])
            #expect(sized.exitCode == 1, "\(sized.stdout)\(sized.stderr)")
            #expect(sized.stderr.contains("tests at once itself, 1 batch(es)"), "\(sized.stderr)")
            let sizedID = try #require(sized.stdout.split(separator: " ").dropFirst().first.map(String.init))
            let processes = try await queryRows(
                cli.environment["ORCHESTRATE_DATABASE_URL"]!,
                "SELECT count(DISTINCT pid) FROM attempts WHERE run_id = '\(sizedID)' AND attempt = 1 AND scenario_id LIKE '%)'",
                as: Int64.self)
            #expect((processes.first ?? 5) <= 2, "Swift Testing's processes: \(processes)")
            let total = try await cli.run(["logs", sizedID, "ShopTests.PriceTests/total()"])
            #expect(total.stdout.contains("seven is not eight"), "\(total.stdout)")

            // The listing is kept for the binary it came from: a test added and built is listed.
            let kept = try FileManager.default.contentsOfDirectory(atPath: directory.file("shop/.orchestrate/listings"))
            #expect(kept.count == 1, "\(kept)")
            try directory.write("shop/Tests/ShopTests/AddedTests.swift", "import Testing\n@Test func added() {}\n")
            try directory.write(
                "shop/orchestrate.yml", "workers: 1\nsuite:\n  swiftpm: { package: . }\nmock: { mode: live }\n")
            let relisted = try await cli.run(["scenarios"])
            #expect(relisted.stdout.contains("ShopTests.added()"), "\(relisted.stdout)\(relisted.stderr)")
        }
    }

    @Test("a package that does not build is one error naming orchestrate.yml's line and the compiler's error, exit 2")
    func brokenBuild() async throws {
        try await TemporaryDirectory.with { directory in
            try Self.copyFixture(to: directory.file("shop"))
            try directory.write("shop/Sources/Shop/Broken.swift", "let broken: Int = \"not a number\"\n")
            try directory.write("shop/orchestrate.yml", "suite:\n  swiftpm:\n    filter: CartTests\n")
            let cli = OrchestrateCLI(
                directory: directory.file("shop"), database: try await TestPostgres.shared.makeDatabaseURL())
            let run = try await cli.run(["run", "--progress", "none"])
            #expect(run.exitCode == 2, "\(run.stdout)\(run.stderr)")
            #expect(run.stderr.contains("orchestrate.yml:3: suite.swiftpm's build"), "\(run.stderr)")
            #expect(run.stderr.contains("Broken.swift:1:") && run.stderr.contains("error:"), "\(run.stderr)")
        }
    }
}
