import OrchestrateModel

/// How orchestrate.yml's `suite:` describes the scenarios: a command template, listed scenarios, a listing command,
/// feature files, a Swift package or an Xcode project (each read by its ``SuiteSource``), their time limit,
/// environment, results format and batch bounds. Data only: the sources do the work.
package struct SuiteDefinition: Sendable {
    /// Command template for scenarios without their own: `{id} {name} {uri} {line}` are filled in.
    package var command: String?
    /// Time limit per attempt. Default 5 min.
    package var timeout: Duration = .seconds(300)
    /// Added to every scenario's environment.
    package var environment: [String: String] = [:]
    package var scenarios: [Entry] = []
    /// Glob patterns of feature files (`Features/**/*.feature`): every pickle becomes a scenario.
    package var gherkin: [String] = []
    /// Where `gherkin` is in the config file.
    package var gherkinLine = 0
    /// A command that prints test ids, one per line (``TestListing``): every id becomes a scenario.
    package var list: String?
    /// Where `list` is in the config file.
    package var listLine = 0
    /// `suite.results`: the report every scenario's command writes into its artifacts folder, which gives each test
    /// its result (``ResultsFormat``).
    package var results: ResultsFormat?
    /// `suite.batch`: bounds of the batches a `{ids}` command (or `suite.swiftpm`) runs.
    package var batch = BatchBounds()
    /// `suite.swiftpm`: a Swift package's tests (``SwiftPMSuite``).
    package var swiftpm: SwiftPM?
    /// `suite.xcodebuild`: an Xcode project's tests (``XcodeSuite``).
    package var xcodebuild: Xcode?

    package init() {}

    package struct Xcode: @unchecked Sendable {
        package var project: String?
        package var workspace: String?
        package var scheme = ""
        package var testPlan: String?
        /// The simulator device every slot's simulator is cloned from (`simctl clone`), e.g. `iPhone 16`.
        package var device = ""
        /// Each slot's simulator is erased before every attempt but its first.
        package var erase = false
        package var filter: Regex<AnyRegexOutput>?
        package var build = true
        /// Where `xcodebuild` is in the config file.
        package var line: Int

        package init(line: Int) {
            self.line = line
        }
    }

    /// `suite.batch`: `auto` (the default) sizes a run's batches from what the runner costs (``BatchSizing``), within
    /// `size` and `seconds`; with `auto: false` every batch fills up to them.
    package struct BatchBounds: Sendable {
        /// Tests per process at most. Default 10,000 with `auto`, else 10.
        package var size: Int?
        /// Expected seconds per process at most (from history; tests never seen count as nothing). Default 600 with
        /// `auto`, else 60.
        package var seconds: Int?
        package var auto = true

        package init() {}

        /// The bounds of a batch of `command`.
        package func batch(_ command: String) -> Batch {
            Batch(
                command: command, size: size ?? (auto ? 10_000 : 10),
                milliseconds: Int64(seconds ?? (auto ? 600 : 60)) * 1000)
        }
    }

    package struct SwiftPM: @unchecked Sendable {
        /// The package's folder, relative to the config's. Default `.`.
        package var package = "."
        /// Only tests whose ids it matches (anywhere in the id, as `swift test --filter`).
        package var filter: Regex<AnyRegexOutput>?
        /// Whether each host builds the tests first. Default true; false when an earlier step built them.
        package var build = true
        /// Where `swiftpm` is in the config file.
        package var line: Int

        package init(line: Int) {
            self.line = line
        }
    }

    package struct Entry: Sendable {
        package var id: String
        package var name: String?
        package var command: String?
        package var tags: [String] = []
        package var timeout: Duration?
        package var environment: [String: String] = [:]
        /// Where the entry starts in the config file.
        package var line: Int

        package init(id: String, line: Int) {
            self.id = id
            self.line = line
        }
    }
}
