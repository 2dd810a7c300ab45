/// The keywords of one spoken language (`# language: fr`).
public struct Dialect: Sendable, Equatable {
    public let name: String
    public let native: String
    public let feature: [String]
    public let rule: [String]
    public let background: [String]
    public let scenario: [String]
    public let scenarioOutline: [String]
    public let examples: [String]
    public let given: [String]
    public let when: [String]
    public let then: [String]
    public let and: [String]
    public let but: [String]

    /// Step keywords, longest first, so that a keyword that starts another (`Soit ` and `Soit que `) does
    /// not win over it.
    var stepKeywords: [String] {
        (given + when + then + and + but).enumerated()
            .sorted { $0.element.unicodeScalars.count > $1.element.unicodeScalars.count || ($0.element.unicodeScalars.count == $1.element.unicodeScalars.count && $0.offset < $1.offset) }
            .map(\.element)
    }

    /// What a step keyword says about its step: a keyword of one kind only (`Given `) is that kind; one
    /// shared by several (`* `) is unknown.
    func keywordType(of keyword: String) -> KeywordType {
        var kinds: [KeywordType] = []
        for (list, kind) in [(given, KeywordType.context), (when, .action), (then, .outcome), (and, .conjunction), (but, .conjunction)] {
            kinds += list.filter { $0 == keyword }.map { _ in kind }
        }
        return kinds.count == 1 ? kinds[0] : .unknown
    }
}

/// The kind of a step keyword (Cucumber's `StepKeywordType`).
public enum KeywordType: String, Sendable, Codable {
    case unknown = "Unknown"
    case context = "Context"
    case action = "Action"
    case outcome = "Outcome"
    case conjunction = "Conjunction"
}
