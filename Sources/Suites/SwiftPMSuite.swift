import Foundation
import OrchestrateModel

/// `suite.swiftpm`: the tests of a Swift package as they are. The package's tests are built once per host (`swift build
/// --build-tests`), listed with `swift test list` (XCTest `Module.Class/test`, Swift Testing `Module.Suite/func()`),
/// and run in batches by the package's test binary itself — not by `swift test`, which holds a lock on the package's
/// `.build` folder and so runs one at a time. XCTest tests run as `<binary> id,id,…`, their output written to and read
/// from `tests.xctest.log` (kept with a failure); Swift Testing tests as `<binary> --testing-library swift-testing
/// --filter …`, their results read from its event stream (`events.jsonl`). Both files are written into the attempt's
/// artifacts folder.
struct SwiftPMSuite: SuiteSource {
    let swiftpm: SuiteDefinition.SwiftPM

    init(_ swiftpm: SuiteDefinition.SwiftPM) {
        self.swiftpm = swiftpm
    }

    /// Builds the package's tests unless this process did already (or `build: false`); a failed build is one error at
    /// the config's `suite.swiftpm` line, with the compiler's first errors.
    func prepare(_ context: SuiteContext) async throws {
        guard swiftpm.build else { return }
        let package = context.resolve(swiftpm.package)
        try await TestBuild.once(
            "swift build --build-tests --package-path \(ShellWord.quote(package))", of: package, context: context,
            line: swiftpm.line,
            what: "suite.swiftpm")
    }

    /// The package's tests (those `filter` matches) as scenarios, after building them.
    func scenarios(_ context: SuiteContext, seen: inout Set<String>) async throws -> [Scenario] {
        try await prepare(context)
        let suite = context.definition
        let package = context.resolve(swiftpm.package)
        let quoted = ShellWord.quote(package)
        var ids = try await context.ids(
            of: "swift test list --skip-build --package-path \(quoted) 2>/dev/null", line: swiftpm.line,
            what: "suite.swiftpm's listing")
        if let filter = swiftpm.filter { ids = ids.filter { (try? filter.firstMatch(in: $0)) != nil } }
        guard !ids.isEmpty else {
            throw ConfigError(
                .noScenarios,
                file: context.configPath, line: swiftpm.line, "suite.swiftpm.filter matches none of the package's tests"
            )
        }
        for id in ids where !seen.insert(id).inserted {
            throw ConfigError(
                .duplicateID, file: context.configPath, line: swiftpm.line, "a test \"\(id)\" is listed twice")
        }
        let binary = try await testBinary(package: package, context: context)
        let relative = binary.hasPrefix(package + "/") ? "./" + binary.dropFirst(package.count + 1) : binary
        // Commands run in the config's folder, on any host of the run: the package and its binary are named relative to
        // it.
        let enter = "cd \(ShellWord.quote(swiftpm.package)) || exit 3; "
        let xctest = suite.batch.batch(
            enter
                + "exec \(ShellWord.quote(String(relative))) {ids-comma} > \"$ORCHESTRATE_ARTIFACTS_DIR/tests.xctest.log\" 2>&1"
        )
        var swiftTesting = xctest
        swiftTesting.command =
            enter
            + "exec \(ShellWord.quote(String(relative))) --testing-library swift-testing --filter {ids-swift-testing} "
            + "--event-stream-output-path \"$ORCHESTRATE_ARTIFACTS_DIR/events.jsonl\" --event-stream-version 0"
        return ids.map { id in
            // Swift Testing names a function with its parameter list: `func()`, `add(_:to:)`.
            let batch = id.hasSuffix(")") ? swiftTesting : xctest
            return Scenario(
                id: id, name: id, command: batch.command(for: [id]),
                timeoutMilliseconds: suite.timeout.wholeMilliseconds,
                environment: suite.environment, uri: context.configPath, line: swiftpm.line, results: .swiftpm,
                batch: batch)
        }
    }

    /// The package's test binary: the one `*.xctest` in its build's bin folder.
    private func testBinary(package: String, context: SuiteContext) async throws -> String {
        let output = try await context.output(
            of: "swift build --show-bin-path --package-path \(ShellWord.quote(package))", line: swiftpm.line,
            what: "suite.swiftpm")
        let bin = output.text.split(whereSeparator: \.isNewline).last.map(String.init) ?? ""
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: bin)) ?? []).filter {
            $0.hasSuffix(".xctest")
        }.sorted()
        guard let name = names.first else {
            throw ConfigError(
                .commandFailed,
                file: context.configPath, line: swiftpm.line,
                "suite.swiftpm: no test binary (*.xctest) in \(bin) after the build")
        }
        return "\(bin)/\(name)"
    }
}
