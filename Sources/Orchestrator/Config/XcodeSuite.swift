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
enum XcodeSuite {
    /// Where the build goes, relative to the config's folder.
    static let derivedData = ".orchestrate/xcode"

    /// `-project P` or `-workspace W`, `-scheme S`, and the test plan if any, as shell words.
    private static func selection(_ xcode: OrchestrateConfig.Suite.Xcode) -> String {
        var words = [xcode.workspace.map { "-workspace \(ShellWord.quote($0))" } ?? "-project \(ShellWord.quote(xcode.project ?? ""))"]
        words.append("-scheme \(ShellWord.quote(xcode.scheme))")
        if let plan = xcode.testPlan { words.append("-testPlan \(ShellWord.quote(plan))") }
        return words.joined(separator: " ")
    }

    /// A simulator destination by device name, for building and listing.
    private static func destination(_ xcode: OrchestrateConfig.Suite.Xcode) -> String {
        ShellWord.quote("platform=iOS Simulator,name=\(xcode.device)")
    }

    /// Builds the tests unless this process did already (or `build: false`); a failed build is one error at the config's
    /// `suite.xcodebuild` line with the compiler's first errors.
    static func build(_ xcode: OrchestrateConfig.Suite.Xcode, config: OrchestrateConfig) async throws {
        guard xcode.build else { return }
        try await TestBuild.once(
            "xcodebuild build-for-testing \(selection(xcode)) -destination \(destination(xcode)) -derivedDataPath \(derivedData)",
            of: config.resolve(derivedData), config: config, line: xcode.line, what: "suite.xcodebuild")
    }

    /// The `.xctestrun` file the build wrote, relative to the config's folder.
    static func testRun(config: OrchestrateConfig, line: Int) throws -> String {
        let products = "\(derivedData)/Build/Products"
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: config.resolve(products))) ?? []).filter { $0.hasSuffix(".xctestrun") }
        guard let name = names.sorted().first else {
            throw ConfigError(file: config.path, line: line, "suite.xcodebuild: no .xctestrun file in \(products) after the build")
        }
        return "\(products)/\(name)"
    }

    /// The project's tests (those `filter` matches) as scenarios, after building them.
    static func scenarios(_ xcode: OrchestrateConfig.Suite.Xcode, config: OrchestrateConfig) async throws -> [Scenario] {
        try await build(xcode, config: config)
        let testRun = try testRun(config: config, line: xcode.line)
        let listing = "\(derivedData)/tests.json"
        _ = try await TestListing.output(
            of: "rm -f \(listing); xcodebuild test-without-building -xctestrun \(ShellWord.quote(testRun)) -destination \(destination(xcode)) "
                + "-enumerate-tests -test-enumeration-format json -test-enumeration-style flat -test-enumeration-output-path \(listing) 1>&2",
            directory: config.directory, environment: config.suite.environment, timeout: config.suite.timeout, file: config.path,
            line: xcode.line, what: "suite.xcodebuild's listing")
        var ids: [String]
        do {
            ids = try XcodeResults.enumeratedTests(try Data(contentsOf: URL(fileURLWithPath: config.resolve(listing))), file: listing)
        } catch {
            throw ConfigError(file: config.path, line: xcode.line, "suite.xcodebuild's listing: \(error)")
        }
        for id in ids { try TestListing.check(id, file: config.path, line: xcode.line, from: "suite.xcodebuild's listing holds") }
        if let filter = xcode.filter { ids = ids.filter { (try? filter.firstMatch(in: $0)) != nil } }
        guard !ids.isEmpty else { throw ConfigError(file: config.path, line: xcode.line, "suite.xcodebuild lists no test (or filter matches none)") }
        let bundle = "\"$ORCHESTRATE_ARTIFACTS_DIR/tests.xcresult\""
        let batch = Batch(
            command: "xcodebuild test-without-building -xctestrun \(ShellWord.quote(testRun)) -destination \"id=$ORCHESTRATE_SIMULATOR_UDID\" "
                + "-resultBundlePath \(bundle) {ids-only-testing}; status=$?; "
                + "xcrun xcresulttool get test-results tests --path \(bundle) --format json > \"$ORCHESTRATE_ARTIFACTS_DIR/tests.xcresult.json\"; "
                + "if [ $status -ne 0 ]; then xcrun xcresulttool export attachments --path \(bundle) "
                + "--output-path \"$ORCHESTRATE_ARTIFACTS_DIR/attachments\" >/dev/null; fi; exit $status",
            size: config.suite.batch.size, milliseconds: Int64(config.suite.batch.seconds) * 1000)
        return ids.map { id in
            Scenario(
                id: id, name: id, command: batch.command(for: [id]), timeoutMilliseconds: config.suite.timeout.wholeMilliseconds,
                environment: config.suite.environment, uri: config.path, line: xcode.line, results: .xcresult, batch: batch)
        }
    }
}
