import Foundation
import OrchestrateTesting
import ProcessSupervisor
import Testing

/// `suite.xcodebuild`, against stand-in `xcodebuild` and `xcrun` executables that answer as Xcode 16 and 26 do: Xcode
/// cannot run on Linux, and this adapter has not yet run on a Mac.
@Suite("suite.xcodebuild with stand-ins for Xcode 16 and 26", .timeLimit(.minutes(3)))
struct XcodeSuiteTests {
    static let standIn = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "Fixtures/xcode-standin/xcode.py"
    ).path

    /// A project whose xcodebuild and xcrun are the stand-in (first on PATH), and a CLI for it.
    static func project(
        in directory: TemporaryDirectory, xcode: String, erase: Bool = true, extra: String = ""
    ) async throws -> OrchestrateCLI {
        let bin = directory.file("bin")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        for tool in ["xcodebuild", "xcrun"] where !FileManager.default.fileExists(atPath: "\(bin)/\(tool)") {
            try FileManager.default.createSymbolicLink(atPath: "\(bin)/\(tool)", withDestinationPath: standIn)
        }
        let path = bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        try directory.write(
            "app/orchestrate.yml",
            """
            workers: 2
            retries: 1
            suite:
              xcodebuild:
                project: App.xcodeproj
                scheme: App
                device: iPhone 16
                erase: \(erase)
              batch: { size: 3 }
              env: { PATH: "\(path)", STANDIN_STATE: "\(directory.file("simulators.json"))", STANDIN_LOG: "\(directory.file("calls.log"))", STANDIN_XCODE: "\(xcode)"\(extra) }
            mock: { mode: live }
            """)
        return OrchestrateCLI(
            directory: directory.file("app"), database: try await TestPostgres.shared.makeDatabaseURL())
    }

    /// The stand-in's log: every simctl and xcodebuild test call.
    static func calls(_ directory: TemporaryDirectory) throws -> [[String: Any]] {
        try String(contentsOfFile: directory.file("calls.log"), encoding: .utf8).split(separator: "\n").compactMap {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    static func simulatorsLeft(_ directory: TemporaryDirectory) throws -> Int {
        let state =
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: directory.file("simulators.json")))) as? [String: Any]
        return (state?["simulators"] as? [String: Any])?.count ?? -1
    }

    static func duration(_ cli: OrchestrateCLI, of test: String) async throws -> Int64? {
        try await queryRows(
            cli.environment["ORCHESTRATE_DATABASE_URL"]!,
            "SELECT duration_ms FROM attempts WHERE scenario_id = '\(test)' AND state = 'finished' ORDER BY id LIMIT 1",
            as: Int64.self
        ).first
    }

    @Test(
        "Xcode 16: listed tests run in -only-testing batches on a simulator per slot, with results, locale durations and screenshots"
    )
    func xcode16() async throws {
        try await TemporaryDirectory.with { directory in
            let cli = try await Self.project(in: directory, xcode: "16", extra: ", STANDIN_GHOST: \"1\"")
            let listed = try await cli.run(["scenarios"])
            #expect(listed.exitCode == 0, "\(listed.stderr)")
            for id in [
                "AppUITests/LoginTests/testLogin", "AppUITests/CartTests/testSlow", "AppTests/PriceTests/discount()",
            ] {
                #expect(listed.stdout.contains(id), "\(listed.stdout)")
            }
            #expect(!listed.stdout.contains("testDisabled"), "disabled tests are not listed")
            let run = try await cli.run(["run", "--progress", "none"])
            #expect(run.exitCode == 1, "\(run.stdout)\(run.stderr)")
            #expect(run.stdout.contains("6 scenarios, 3 passed, 1 flaky, 2 failed"), "\(run.stdout)")
            let runID = try #require(run.stdout.split(separator: " ").dropFirst().first.map(String.init))
            let logout = try await cli.run(["logs", runID, "testLogout"])
            #expect(
                logout.stdout.contains("LoginTests.swift:42: XCTAssertTrue failed - still logged in"),
                "\(logout.stdout)")
            // Asked for and never run (a test plan leaves it out, or a misspelled -only-testing): no result, a failure.
            let ghost = try await cli.run(["logs", runID, "testGhost"])
            #expect(
                ghost.stdout.contains("its runner reported no result for AppUITests/GhostTests/testGhost"),
                "\(ghost.stdout)")
            // "1m 1,25s" in the machine's locale.
            #expect(try await Self.duration(cli, of: "AppUITests/CartTests/testSlow") == 61_250)
            // The failure's screenshot, exported into the attempt's kept artifacts.
            let kept =
                FileManager.default.enumerator(atPath: directory.file("app/.orchestrate/runs"))?.allObjects as? [String]
                ?? []
            #expect(kept.contains { $0.hasSuffix("attachments/AppUITests_LoginTests_testLogout.png") }, "\(kept)")
            // A simulator per slot, cloned from the device, erased between attempts, every batch on one of them with
            // the contract as TEST_RUNNER_ variables; all deleted at the end.
            let calls = try Self.calls(directory)
            let clones = calls.filter { ($0["args"] as? [String])?.first == "clone" }
            #expect(
                clones.count == 2 && clones.allSatisfy { ($0["args"] as? [String])?[1] == "iPhone 16" }, "\(clones)")
            #expect(calls.contains { ($0["args"] as? [String])?.first == "erase" })
            let batches = calls.filter { $0["tool"] as? String == "xcodebuild" }
            #expect(batches.count < 12, "tests ran in batches: \(batches.count) xcodebuild runs")
            #expect(
                batches.allSatisfy { ($0["mock"] as? String)?.hasPrefix("http://127.0.0.1:") == true }, "\(batches)")
            #expect(try Self.simulatorsLeft(directory) == 0)
            let junit = try String(
                contentsOfFile: directory.file("app/.orchestrate/reports/\(runID)/junit.xml"), encoding: .utf8)
            #expect(junit.contains(#"name="testLogout" classname="AppUITests/LoginTests""#), "\(junit)")
        }
    }

    @Test(
        "Xcode 26: durationInSeconds and nodeIdentifierURL; a test the runner retried itself passes by its last repetition"
    )
    func xcode26() async throws {
        try await TemporaryDirectory.with { directory in
            let cli = try await Self.project(in: directory, xcode: "26", erase: false)
            let run = try await cli.run(["run", "--progress", "none"])
            #expect(run.exitCode == 1, "\(run.stdout)\(run.stderr)")
            #expect(
                run.stdout.contains("5 scenarios, 4 passed, 1 failed"),
                "the checkout test passed on the runner's own retry: \(run.stdout)")
            #expect(try await Self.duration(cli, of: "AppUITests/CartTests/testSlow") == 61_250)
            let calls = try Self.calls(directory)
            #expect(!calls.contains { ($0["args"] as? [String])?.first == "erase" }, "erase: false erases nothing")
            #expect(try Self.simulatorsLeft(directory) == 0)
        }
    }

    @Test(
        "Ctrl-C mid-run deletes the simulators; a build that fails is one error naming orchestrate.yml's line, exit 2")
    func interruptedAndBroken() async throws {
        try await TemporaryDirectory.with { directory in
            let cli = try await Self.project(in: directory, xcode: "16", extra: ", STANDIN_SLEEP: \"30\"")
            let run = try cli.launch(["run", "--progress", "none"], name: "run")
            let cloned = await eventually(timeout: .seconds(60)) { ((try? Self.simulatorsLeft(directory)) ?? 0) == 2 }
            #expect(cloned)
            kill(try #require(run.pid), SIGINT)
            let result = cli.output(await run.wait(), name: "run")
            #expect(result.exitCode == 130, "\(result.stdout)\(result.stderr)")
            #expect(try Self.simulatorsLeft(directory) == 0, "the slots' simulators are deleted after Ctrl-C")

            let broken = try await Self.project(in: directory, xcode: "16", extra: ", STANDIN_BUILD_FAILS: \"1\"")
            let failed = try await broken.run(["run", "--progress", "none"])
            #expect(failed.exitCode == 2, "\(failed.stdout)\(failed.stderr)")
            #expect(failed.stderr.contains("orchestrate.yml:5: suite.xcodebuild's build"), "\(failed.stderr)")
            #expect(
                failed.stderr.contains("LoginView.swift:12:5: error: cannot find 'session' in scope"),
                "\(failed.stderr)")
        }
    }
}
