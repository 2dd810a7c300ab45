import Foundation
import OrchestrateModel

/// `suite.swiftpm`: the tests of a Swift package as they are. The package's tests are built once per host (`swift build
/// --build-tests`), listed by the package's test binary as `swift test list` lists them (XCTest `Module.Class/test`,
/// Swift Testing `Module.Suite/func()`), and run in batches by that binary itself — not by `swift test`, which holds a lock on the package's
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
        let binary = try await testBinary(package: package, context: context)
        let cache = ListingCache(binary: binary, directory: context.directory)
        let all: [String]
        let listed: Int64
        if let kept = cache?.read(configPath: context.configPath, line: swiftpm.line) {
            (all, listed) = kept
        } else {
            let clock = ContinuousClock()
            let started = clock.now
            all = try await listedIDs(binary: binary, package: package, context: context)
            listed = (clock.now - started).wholeMilliseconds
            cache?.write(all, milliseconds: listed)
        }
        var ids = all
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
        let relative = binary.hasPrefix(package + "/") ? "./" + binary.dropFirst(package.count + 1) : binary
        // Commands run in the config's folder, on any host of the run: the package and its binary are named relative to
        // it.
        let enter = "cd \(ShellWord.quote(swiftpm.package)) || exit 3; "
        var xctest = suite.batch.batch(
            enter
                + "exec \(ShellWord.quote(String(relative))) {ids-comma} > \"$ORCHESTRATE_ARTIFACTS_DIR/tests.xctest.log\" 2>&1"
        )
        xctest.listedMilliseconds = listed
        var swiftTesting = xctest
        swiftTesting.command =
            enter
            + "exec \(ShellWord.quote(String(relative))) --testing-library swift-testing --filter {ids-swift-testing} "
            + "--event-stream-output-path \"$ORCHESTRATE_ARTIFACTS_DIR/events.jsonl\" --event-stream-version 0"
        // Swift Testing runs the tests of a process in parallel (XCTest, one after another).
        swiftTesting.parallel = true
        // Every Swift Testing test of the binary in one batch needs no filter.
        let swiftTestingIDs = ids.count(where: Self.isSwiftTesting)
        if swiftTestingIDs == all.count(where: Self.isSwiftTesting) { swiftTesting.whole = swiftTestingIDs }
        // A test's own command names it, whatever else the binary holds (its history keys on it).
        var named = swiftTesting
        named.whole = nil
        let (swiftTestingCommand, xctestCommand) = (named.ownCommands(), xctest.ownCommands())
        return ids.map { id in
            Scenario(
                id: id, name: id, command: Self.isSwiftTesting(id) ? swiftTestingCommand(id) : xctestCommand(id),
                timeoutMilliseconds: suite.timeout.wholeMilliseconds,
                environment: suite.environment, results: .swiftpm,
                batch: Self.isSwiftTesting(id) ? swiftTesting : xctest)
        }
    }

    /// Swift Testing names a function with its parameter list: `func()`, `add(_:to:)`.
    static func isSwiftTesting(_ id: String) -> Bool { id.hasSuffix(")") }

    /// The package's test ids, listed by its test binary itself (XCTest's `--dump-tests-json`, then Swift Testing's
    /// `--list-tests`) in milliseconds, where `swift test list` first loads the package (half a second and more); by
    /// `swift test list` when the binary cannot list them.
    private func listedIDs(binary: String, package: String, context: SuiteContext) async throws -> [String] {
        let what = "suite.swiftpm's listing"
        let executable = ShellWord.quote(binary)
        let listing = "\(executable) --dump-tests-json; \(executable) --testing-library swift-testing --list-tests"
        do {
            async let xctest = context.output(
                of: "exec \(executable) --dump-tests-json", line: swiftpm.line, what: what)
            async let swiftTesting = context.output(
                of: "exec \(executable) --testing-library swift-testing --list-tests", line: swiftpm.line, what: what)
            let functions = try await swiftTesting.text.split(whereSeparator: \.isNewline)
            // A Swift Testing id names a function with its parameter list; anything else is not such a listing (a
            // binary without Swift Testing taking the flags for something else).
            guard functions.allSatisfy({ Self.isSwiftTesting(String($0)) }) else { throw ListingUnread() }
            let text =
                try Self.xctestIDs(json: try await xctest.text).joined(separator: "\n") + "\n"
                + functions.joined(separator: "\n")
            return try TestListing.ids(
                in: (text, ""), of: listing, file: context.configPath, line: swiftpm.line, what: what)
        } catch {
            return try await context.ids(
                of: "swift test list --skip-build --package-path \(ShellWord.quote(package)) 2>/dev/null",
                line: swiftpm.line, what: what)
        }
    }

    private struct ListingUnread: Error {}

    /// XCTest's tests in its `--dump-tests-json` listing (bundle, class, test): `Module.Class/test`, as `swift test
    /// list` names them.
    static func xctestIDs(json: String) throws -> [String] {
        struct Node: Decodable {
            var name: String
            var tests: [Node]?
        }
        func leaves(_ node: Node, in parent: String) -> [String] {
            guard let tests = node.tests else { return ["\(parent)/\(node.name)"] }
            return tests.flatMap { leaves($0, in: node.name) }
        }
        return leaves(try JSONDecoder().decode(Node.self, from: Data(json.utf8)), in: "")
    }

    /// The package's test binary: the one `*.xctest` in its build's bin folder.
    /// SwiftPM's default build folder holds the debug build as `.build/debug` (a link to the platform's folder), where
    /// it is found without loading the package; `swift build --show-bin-path` says where when it is not there.
    private func testBinary(package: String, context: SuiteContext) async throws -> String {
        func binaries(in folder: String) -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".xctest") }
                .sorted()
        }
        var bin = "\(package)/.build/debug"
        if binaries(in: bin).isEmpty {
            let output = try await context.output(
                of: "swift build --show-bin-path --package-path \(ShellWord.quote(package))", line: swiftpm.line,
                what: "suite.swiftpm")
            bin = output.text.split(whereSeparator: \.isNewline).last.map(String.init) ?? ""
        }
        guard let name = binaries(in: bin).first else {
            throw ConfigError(
                .commandFailed,
                file: context.configPath, line: swiftpm.line,
                "suite.swiftpm: no test binary (*.xctest) in \(bin) after the build")
        }
        return "\(bin)/\(name)"
    }
}

/// A test binary's listing, kept in the project's `.orchestrate/listings/` with what identifies the binary (its path,
/// inode, size, modification and change times): a binary not rebuilt since lists the same tests, so a run lists them
/// again only after a build. The listing's time is kept too: it stands for the runner's start-up in a suite without
/// history.
struct ListingCache {
    let path: String
    let key: String

    init?(binary: String, directory: String) {
        var facts = stat()
        guard stat(binary, &facts) == 0 else { return nil }
        // One line, whatever the path holds.
        key =
            "\(binary.replacingOccurrences(of: "\n", with: " "))\t\(facts.st_ino) \(facts.st_size) "
            + "\(facts.st_mtim.tv_sec).\(facts.st_mtim.tv_nsec) \(facts.st_ctim.tv_sec).\(facts.st_ctim.tv_nsec)"
        // FNV-1a of the path: one file per binary, whatever its path's characters.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in binary.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        path = "\(directory)/.orchestrate/listings/\(String(hash, radix: 16)).txt"
    }

    /// The ids and the listing's milliseconds, when kept for this very binary; checked as a listing is.
    func read(configPath: String, line: Int) -> (ids: [String], milliseconds: Int64)? {
        // No larger than a listing may be, and never through a link.
        guard let facts = try? FileManager.default.attributesOfItem(atPath: path),
            facts[.type] as? FileAttributeType == .typeRegular,
            (facts[.size] as? Int ?? .max) <= TestListing.maximumBytes,
            let text = try? String(contentsOfFile: path, encoding: .utf8)
        else { return nil }
        let lines = text.split(separator: "\n", maxSplits: 2, omittingEmptySubsequences: false)
        guard lines.count == 3, lines[0] == key,
            let milliseconds = Int64(lines[1]), milliseconds >= 0,
            let ids = try? TestListing.ids(
                in: (String(lines[2]), ""), of: "the kept listing \(path)", file: configPath, line: line,
                what: "suite.swiftpm's listing"),
            !ids.isEmpty
        else { return nil }
        return (ids, milliseconds)
    }

    /// Keeps `ids` for the binary; a listing that cannot be kept is listed again next time.
    func write(_ ids: [String], milliseconds: Int64) {
        let text = key + "\n\(milliseconds)\n" + ids.joined(separator: "\n")
        try? AtomicFile.write(text, to: path, permissions: 0o600)
    }
}
