/// The keywords of one spoken language (`# language: fr`).
package struct Dialect: Sendable, Equatable {
    package let name: String
    package let native: String
    package let feature: [String]
    package let rule: [String]
    package let background: [String]
    package let scenario: [String]
    package let scenarioOutline: [String]
    package let examples: [String]
    package let given: [String]
    package let when: [String]
    package let then: [String]
    package let and: [String]
    package let but: [String]

    /// Step keywords with their kind, longest first, so that a keyword that starts another (`Soit ` and
    /// `Soit que `) does not win over it. A keyword of one kind only (`Given `) is that kind; one shared by
    /// several (`* `) is unknown.
    var stepKeywords: [(keyword: String, type: KeywordType)] {
        let lists = [
            (given, KeywordType.context), (when, .action), (then, .outcome), (and, .conjunction), (but, .conjunction),
        ]
        var kinds: [String: [KeywordType]] = [:]
        for (list, kind) in lists { for keyword in list { kinds[keyword, default: []].append(kind) } }
        let all = lists.flatMap(\.0)
        // Longest first; equal lengths keep the language's order (a stable sort by index).
        return all.indices
            .sorted { (all[$0].unicodeScalars.count, $1) > (all[$1].unicodeScalars.count, $0) }
            .map { index in
                let keyword = all[index]
                let types = kinds[keyword]!
                return (keyword, types.count == 1 ? types[0] : .unknown)
            }
    }
}

/// The kind of a step keyword (Cucumber's `StepKeywordType`).
package enum KeywordType: String, Sendable, Codable {
    case unknown = "Unknown"
    case context = "Context"
    case action = "Action"
    case outcome = "Outcome"
    case conjunction = "Conjunction"
}
