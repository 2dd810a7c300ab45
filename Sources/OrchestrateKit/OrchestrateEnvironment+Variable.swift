extension OrchestrateEnvironment {
    /// The names of the scenario process environment (the env contract), in one place for both sides: orchestrate's
    /// worker slots set them for every attempt, test code reads them through ``OrchestrateEnvironment``.
    /// Every one is also set with the ``testRunnerPrefix``, which xcodebuild strips and forwards to the test runner.
    public enum Variable: String, Sendable, CaseIterable, Hashable {
        /// `http://127.0.0.1:PORT`, the slot's mock server.
        case mockURL = "ORCHESTRATE_MOCK_URL"
        case mockPort = "ORCHESTRATE_MOCK_PORT"
        /// `http://127.0.0.1:PORT/__orchestrate`, the mock server's control API.
        case controlURL = "ORCHESTRATE_CONTROL_URL"
        /// `replay`, `record`, `live`, `mock` or `hybrid`.
        case mode = "ORCHESTRATE_MODE"
        case runID = "ORCHESTRATE_RUN_ID"
        case scenarioID = "ORCHESTRATE_SCENARIO_ID"
        /// 1 for the first attempt, 2 for its first retry…
        case attempt = "ORCHESTRATE_ATTEMPT"
        /// The slot number, 1…N.
        case worker = "ORCHESTRATE_WORKER"
        /// A per-scenario seed, stable across runs (in replay the cassette's).
        case seed = "ORCHESTRATE_SEED"
        /// The frozen clock (ISO 8601): the run's start, in replay the recording's.
        case now = "ORCHESTRATE_NOW"
        /// The attempt's private folder; what it leaves there is kept.
        case artifactsDirectory = "ORCHESTRATE_ARTIFACTS_DIR"
        /// For a pickle of `suite.gherkin`: its feature file (relative to the config), its line, and the pickle as
        /// Cucumber Messages JSON.
        case gherkinURI = "ORCHESTRATE_GHERKIN_URI"
        case gherkinLine = "ORCHESTRATE_GHERKIN_LINE"
        case pickle = "ORCHESTRATE_PICKLE"
        /// The UDID of the simulator the slot's attempts run on (`suite.xcodebuild`: one cloned per slot).
        case simulator = "ORCHESTRATE_SIMULATOR_UDID"

        /// What xcodebuild strips from a variable of the test's scheme before handing it to the test runner.
        public static let testRunnerPrefix = "TEST_RUNNER_"

        /// The name with the ``testRunnerPrefix``.
        public var testRunnerName: String { Self.testRunnerPrefix + rawValue }
    }
}
