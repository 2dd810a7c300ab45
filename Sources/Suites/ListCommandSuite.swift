import OrchestrateModel

/// `suite.list`: every test id a command prints (``TestListing``) is a scenario that `suite.command` runs; a command
/// that takes `{ids}` (or another batch placeholder) runs listed tests in batches, one test alone being a batch of one.
struct ListCommandSuite: SuiteSource {
    var command: String
    /// Where `list` is in orchestrate.yml.
    var line: Int

    func scenarios(_ context: SuiteContext, seen: inout Set<String>) async throws -> [Scenario] {
        let suite = context.definition
        let clock = ContinuousClock()
        let started = clock.now
        let ids = try await context.ids(of: command, line: line)
        let listed = (clock.now - started).wholeMilliseconds
        let template = suite.command ?? ""
        var batch = Batch.takesIDs(template) ? suite.batch.batch(template) : nil
        batch?.listedMilliseconds = listed
        let ownCommand = batch?.ownCommands()
        let scenarioTemplate = CommandTemplate.Compiled(scenario: template)
        var scenarios: [Scenario] = []
        for id in ids {
            guard seen.insert(id).inserted else {
                throw ConfigError(
                    .duplicateID,
                    file: context.configPath, line: line,
                    "suite.list printed \"\(id)\", which suite.scenarios already has")
            }
            scenarios.append(
                Scenario(
                    id: id, name: id,
                    command: ownCommand?(id)
                        ?? scenarioTemplate.fill(id: id, name: id, uri: context.configPath, line: line),
                    timeoutMilliseconds: suite.timeout.wholeMilliseconds, environment: suite.environment,
                    // A listed test is not defined in orchestrate.yml: no place there (reports take its own).
                    results: suite.results, batch: batch
                ))
        }
        return scenarios
    }
}
