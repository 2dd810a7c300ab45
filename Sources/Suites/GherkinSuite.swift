import OrchestrateModel

import struct OrchestrateKit.OrchestrateEnvironment

/// `suite.gherkin`: every pickle of the feature files the patterns match (``FeatureDiscovery``) is a scenario that
/// `suite.command` runs, the pickle handed to it in the environment (OrchestrateKit's runner executes it). Its id is
/// the feature's path and the scenario's name: one taken already gets a number.
struct GherkinSuite: SuiteSource {
    var patterns: [String]
    /// Where `gherkin` is in orchestrate.yml.
    var line: Int

    func scenarios(_ context: SuiteContext, seen: inout Set<String>) async throws -> [Scenario] {
        let suite = context.definition
        let template = CommandTemplate.Compiled(scenario: suite.command ?? "")
        var scenarios: [Scenario] = []
        for pickle in try FeatureDiscovery.pickles(
            patterns: patterns, in: context.directory, config: context.configPath, line: line)
        {
            let id = FeatureDiscovery.uniqueID(pickle.stableID, seen: &seen)
            let environment = suite.environment.merging([
                OrchestrateEnvironment.Variable.gherkinURI.rawValue: pickle.uri,
                OrchestrateEnvironment.Variable.gherkinLine.rawValue: "\(pickle.line)",
                OrchestrateEnvironment.Variable.pickle.rawValue: pickle.json,
            ]) { $1 }
            scenarios.append(
                Scenario(
                    id: id, name: pickle.name,
                    command: template.fill(id: id, name: pickle.name, uri: pickle.uri, line: pickle.line),
                    tags: pickle.tags, timeoutMilliseconds: suite.timeout.wholeMilliseconds,
                    environment: environment, uri: pickle.uri, line: pickle.line, definitionLine: pickle.scenarioLine,
                    results: suite.results
                ))
        }
        return scenarios
    }
}
