import OrchestrateModel

/// `suite.scenarios`: scenarios listed in orchestrate.yml, each with its own command or `suite.command` filled in
/// (`{id} {name} {uri} {line}`).
struct ListedSuite: SuiteSource {
    func scenarios(_ context: SuiteContext, seen: inout Set<String>) async throws -> [Scenario] {
        let suite = context.definition
        // orchestrate.yml's reader refuses an id listed twice.
        seen.formUnion(suite.scenarios.map(\.id))
        let template = CommandTemplate.Compiled(scenario: suite.command ?? "")
        return suite.scenarios.map { entry in
            let name = entry.name ?? entry.id
            let command =
                entry.command
                ?? template.fill(id: entry.id, name: name, uri: context.configPath, line: entry.line)
            return Scenario(
                id: entry.id, name: name, command: command, tags: entry.tags,
                timeoutMilliseconds: (entry.timeout ?? suite.timeout).wholeMilliseconds,
                environment: suite.environment.merging(entry.environment) { $1 }, uri: context.configPath,
                line: entry.line,
                results: suite.results
            )
        }
    }
}
