import Coordinator
import OrchestrateModel

import struct Foundation.UUID

/// One way orchestrate.yml describes scenarios (`suite.scenarios`, `suite.list`, `suite.swiftpm`, `suite.xcodebuild`,
/// `suite.gherkin`): how its tests are built on a host, listed as scenarios — each with its command, and for a runner
/// that takes many tests at once its batch command (``Batch``, filled in on whichever host runs the batch) and the
/// results format its runner writes (``ResultsFormat``, read by the slot) — and what a slot needs besides its mock
/// server around each attempt. A new kind of suite is one more conformer in this folder and a line in ``SuiteSources``.
package protocol SuiteSource: Sendable {
    /// Builds what the tests need on this host, once per process: before they are listed, and on every host of a run
    /// before its slots start.
    func prepare(_ context: SuiteContext) async throws
    /// The scenarios as they run. `seen` holds the ids of the sources before this one; an id taken already is one
    /// error at this source's line (or, for a source that names its scenarios itself, a new id).
    func scenarios(_ context: SuiteContext, seen: inout Set<String>) async throws -> [Scenario]
    /// What each slot needs around its attempts besides its mock server (a simulator), for run `runID`.
    func attemptHooks(_ context: SuiteContext, runID: UUID) -> (any AttemptHooks)?
}

extension SuiteSource {
    package func prepare(_ context: SuiteContext) async throws {}
    package func attemptHooks(_ context: SuiteContext, runID: UUID) -> (any AttemptHooks)? { nil }
}

/// Every source a suite's definition names, in the order their scenarios come: the listed ones in config order, then
/// every test id `suite.list` prints (in its order), the Swift package's and the Xcode project's tests, then every
/// pickle of the feature files `suite.gherkin` names (files in path order, pickles in file order).
package struct SuiteSources: Sendable {
    package let sources: [any SuiteSource]

    package init(_ definition: SuiteDefinition) {
        var sources: [any SuiteSource] = [ListedSuite()]
        if let list = definition.list { sources.append(ListCommandSuite(command: list, line: definition.listLine)) }
        if let swiftpm = definition.swiftpm { sources.append(SwiftPMSuite(swiftpm)) }
        if let xcode = definition.xcodebuild { sources.append(XcodeSuite(xcode)) }
        if !definition.gherkin.isEmpty {
            sources.append(GherkinSuite(patterns: definition.gherkin, line: definition.gherkinLine))
        }
        self.sources = sources
    }

    /// Builds what every source's tests need on this host (once per process).
    package func prepare(_ context: SuiteContext) async throws {
        for source in sources { try await source.prepare(context) }
    }

    /// The suite's scenarios as they run, every id once.
    package func scenarios(_ context: SuiteContext) async throws -> [Scenario] {
        var seen = Set<String>()
        var scenarios: [Scenario] = []
        for source in sources { scenarios += try await source.scenarios(context, seen: &seen) }
        return scenarios
    }

    /// What the slots need around their attempts, of every source that needs anything.
    package func attemptHooks(_ context: SuiteContext, runID: UUID) -> [any AttemptHooks] {
        sources.compactMap { $0.attemptHooks(context, runID: runID) }
    }
}
