import Foundation
import OrchestrateModel

import struct Gherkin.TagExpression

/// The scenarios `--only` and `--tags` select, in the config's order: `--only` takes scenario ids, or as Cucumber does
/// feature files with optional lines (`Features/pay.feature:12:30`); `--tags` a Cucumber tag expression. With both, a
/// scenario must satisfy both.
package struct ScenarioSelection: Sendable {
    package var only: [String] = []
    package var tags: String?

    package init(only: [String] = [], tags: String? = nil) {
        self.only = only
        self.tags = tags
    }

    /// The selected scenarios; a selector that selects nothing is a ``UsageError``, no scenarios at all a
    /// ``ConfigError``.
    package func select(from scenarios: [Scenario], configPath: String) throws -> [Scenario] {
        guard !scenarios.isEmpty else {
            throw ConfigError(
                .noScenarios,
                file: configPath, line: 1, column: 1, "no scenarios: add some under suite.scenarios (or suite.gherkin)")
        }
        var selected = scenarios
        if !only.isEmpty {
            var wanted = Set<String>()
            for selector in only {
                let place = FeaturePlace(selector)
                let matching = scenarios.filter { $0.id == selector || place.holds($0) }
                if matching.isEmpty {
                    throw UsageError(
                        .notFound,
                        "--only \(selector): no such scenario id or feature FILE[:LINE] in \(configPath) (see orchestrate scenarios)"
                    )
                }
                wanted.formUnion(matching.map(\.id))
            }
            selected = selected.filter { wanted.contains($0.id) }
        }
        if let tags {
            let expression: TagExpression
            do {
                expression = try TagExpression(tags)
            } catch {
                throw UsageError(.badValue, "--tags: \(error)")
            }
            // Tags are written with their @ in expressions, as in feature files.
            selected = selected.filter { scenario in expression.matches(scenario.tags.map { "@\($0)" }) }
            guard !selected.isEmpty else {
                throw UsageError(
                    .notFound,
                    "--tags \(tags): no scenario in \(configPath) has matching tags (see orchestrate scenarios)")
            }
        }
        return selected
    }
}

/// `--only` takes a scenario id, or as Cucumber does a feature file with optional lines (`a.feature:12:30`):
/// a line selects the scenario on it, an outline's line all its example rows, a row's line that row.
struct FeaturePlace {
    let path: String
    let lines: [Int]

    init(_ selector: String) {
        var parts = selector.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        var lines: [Int] = []
        while parts.count > 1, let line = Int(parts[parts.count - 1]) {
            lines.insert(line, at: 0)
            parts.removeLast()
        }
        self.path = URL(fileURLWithPath: parts.joined(separator: ":")).standardized.path
        self.lines = lines
    }

    func holds(_ scenario: Scenario) -> Bool {
        guard let uri = scenario.uri, uri.hasSuffix(".feature"), URL(fileURLWithPath: uri).standardized.path == path
        else { return false }
        return lines.isEmpty || lines.contains { $0 == scenario.line || $0 == scenario.definitionLine }
    }
}
