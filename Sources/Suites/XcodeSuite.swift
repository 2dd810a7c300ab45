import Coordinator
import Foundation
import OrchestrateModel
import Reports

/// `suite.xcodebuild`: an Xcode project's XCUITest and unit tests as they are. Each host builds them once
/// (`xcodebuild build-for-testing` into `.orchestrate/xcode`), the run lists them (`-enumerate-tests`, JSON), and each
/// batch runs as `xcodebuild test-without-building -xctestrun … -only-testing:…` on the slot's own simulator
/// (``SimulatorPool``), the env contract also as `TEST_RUNNER_…` variables so the app under test receives it. Results
/// come from `xcrun xcresulttool get test-results tests` (``XcodeResults``); a failed batch's attachments (screenshots)
/// are exported into the attempt's kept artifacts. A test asked for that did not run (a misspelled `-only-testing` runs
/// nothing and exits 0) has no result, and fails alone. Not yet run on a Mac: tested with stand-in executables that
/// answer as Xcode 16 and 26 do.
struct XcodeSuite: SuiteSource {
    /// Where the build goes, relative to the config's folder.
    static let derivedData = ".orchestrate/xcode"

    let xcode: SuiteDefinition.Xcode

    init(_ xcode: SuiteDefinition.Xcode) {
        self.xcode = xcode
    }

    /// `-project P` or `-workspace W`, `-scheme S`, and the test plan if any, as shell words.
    private var selection: String {
        var words = [
            xcode.workspace.map { "-workspace \(ShellWord.quote($0))" }
                ?? "-project \(ShellWord.quote(xcode.project ?? ""))"
        ]
        words.append("-scheme \(ShellWord.quote(xcode.scheme))")
        if let plan = xcode.testPlan { words.append("-testPlan \(ShellWord.quote(plan))") }
        return words.joined(separator: " ")
    }

    /// A simulator destination by device name, for building and listing.
    private var destination: String {
        ShellWord.quote("platform=iOS Simulator,name=\(xcode.device)")
    }

    /// Builds the tests unless this process did already (or `build: false`); a failed build is one error at the
    /// config's `suite.xcodebuild` line with the compiler's first errors.
    func prepare(_ context: SuiteContext) async throws {
        guard xcode.build else { return }
        try await TestBuild.once(
            "xcodebuild build-for-testing \(selection) -destination \(destination) -derivedDataPath \(Self.derivedData)",
            of: context.resolve(Self.derivedData), context: context, line: xcode.line, what: "suite.xcodebuild")
    }

    /// The `.xctestrun` file the build wrote, relative to the config's folder.
    private func testRun(_ context: SuiteContext) throws -> String {
        let products = "\(Self.derivedData)/Build/Products"
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: context.resolve(products))) ?? []).filter {
            $0.hasSuffix(".xctestrun")
        }
        guard let name = names.sorted().first else {
            throw ConfigError(
                .commandFailed,
                file: context.configPath, line: xcode.line,
                "suite.xcodebuild: no .xctestrun file in \(products) after the build")
        }
        return "\(products)/\(name)"
    }

    /// The project's tests (those `filter` matches) as scenarios, after building them.
    func scenarios(_ context: SuiteContext, seen: inout Set<String>) async throws -> [Scenario] {
        try await prepare(context)
        let suite = context.definition
        let testRun = try testRun(context)
        let listing = "\(Self.derivedData)/tests.json"
        _ = try await context.output(
            of:
                "rm -f \(listing); xcodebuild test-without-building -xctestrun \(ShellWord.quote(testRun)) -destination \(destination) "
                + "-enumerate-tests -test-enumeration-format json -test-enumeration-style flat -test-enumeration-output-path \(listing) 1>&2",
            line: xcode.line, what: "suite.xcodebuild's listing")
        var ids: [String]
        do {
            ids = try XcodeResults.enumeratedTests(
                try Data(contentsOf: URL(fileURLWithPath: context.resolve(listing))), file: listing)
        } catch {
            throw ConfigError(
                .commandFailed, file: context.configPath, line: xcode.line, "suite.xcodebuild's listing: \(error)")
        }
        for id in ids {
            try TestListing.check(
                id, file: context.configPath, line: xcode.line, from: "suite.xcodebuild's listing holds")
        }
        if let filter = xcode.filter { ids = ids.filter { (try? filter.firstMatch(in: $0)) != nil } }
        guard !ids.isEmpty else {
            throw ConfigError(
                .noScenarios,
                file: context.configPath, line: xcode.line, "suite.xcodebuild lists no test (or filter matches none)")
        }
        for id in ids where !seen.insert(id).inserted {
            throw ConfigError(
                .duplicateID, file: context.configPath, line: xcode.line, "a test \"\(id)\" is listed twice")
        }
        let bundle = "\"$ORCHESTRATE_ARTIFACTS_DIR/tests.xcresult\""
        let batch = suite.batch.batch(
            "xcodebuild test-without-building -xctestrun \(ShellWord.quote(testRun)) -destination \"id=$ORCHESTRATE_SIMULATOR_UDID\" "
                + "-resultBundlePath \(bundle) {ids-only-testing}; status=$?; "
                + "xcrun xcresulttool get test-results tests --path \(bundle) --format json > \"$ORCHESTRATE_ARTIFACTS_DIR/tests.xcresult.json\"; "
                + "if [ $status -ne 0 ]; then xcrun xcresulttool export attachments --path \(bundle) "
                + "--output-path \"$ORCHESTRATE_ARTIFACTS_DIR/attachments\" >/dev/null; fi; exit $status")
        let ownCommand = batch.ownCommands()
        return ids.map { id in
            Scenario(
                id: id, name: id, command: ownCommand(id),
                timeoutMilliseconds: suite.timeout.wholeMilliseconds,
                environment: suite.environment, results: .xcresult,
                batch: batch)
        }
    }

    /// Each slot's own simulator (``SimulatorPool``).
    func attemptHooks(_ context: SuiteContext, runID: UUID) -> (any AttemptHooks)? {
        SimulatorPool(xcode, context: context, runID: runID)
    }
}
