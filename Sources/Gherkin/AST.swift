/// The syntax tree of a feature file, shaped as Cucumber's `GherkinDocument` message.
public struct GherkinDocument: Sendable {
    public var feature: Feature?
    public var comments: [Comment]
    /// How many ids the tree used (pickles take the following ones).
    var idsUsed = 0
}

public struct Comment: Sendable {
    public var location: Location
    public var text: String
}

public struct Tag: Sendable {
    public var id: String
    public var location: Location
    /// With its `@`.
    public var name: String
}

public struct Feature: Sendable {
    public enum Child: Sendable {
        case background(Background)
        case scenario(Scenario)
        case rule(Rule)
    }

    public var location: Location
    public var tags: [Tag]
    public var language: String
    public var keyword: String
    public var name: String
    public var description: String
    public var children: [Child]
}

public struct Rule: Sendable {
    public enum Child: Sendable {
        case background(Background)
        case scenario(Scenario)
    }

    public var id: String
    public var location: Location
    public var tags: [Tag]
    public var keyword: String
    public var name: String
    public var description: String
    public var children: [Child]
}

public struct Background: Sendable {
    public var id: String
    public var location: Location
    public var keyword: String
    public var name: String
    public var description: String
    public var steps: [Step]
}

/// A Scenario (or Example); with Examples blocks, a Scenario Outline (or Template).
public struct Scenario: Sendable {
    public var id: String
    public var location: Location
    public var tags: [Tag]
    public var keyword: String
    public var name: String
    public var description: String
    public var steps: [Step]
    public var examples: [Examples]
}

public struct Examples: Sendable {
    public var id: String
    public var location: Location
    public var tags: [Tag]
    public var keyword: String
    public var name: String
    public var description: String
    public var tableHeader: TableRow?
    public var tableBody: [TableRow]
}

public struct Step: Sendable {
    public var id: String
    public var location: Location
    /// As written, with its trailing space (`Given `).
    public var keyword: String
    public var keywordType: KeywordType?
    public var text: String
    public var dataTable: DataTable?
    public var docString: DocString?
}

public struct DocString: Sendable {
    public var location: Location
    public var content: String
    /// `"""` or `` ``` ``.
    public var delimiter: String
    public var mediaType: String?
}

public struct DataTable: Sendable {
    public var location: Location
    public var rows: [TableRow]
}

public struct TableRow: Sendable {
    public var id: String
    public var location: Location
    public var cells: [TableCell]
}

public struct TableCell: Sendable {
    public var location: Location
    public var value: String
}

/// A place in a feature file; the column is absent at the end of the file.
public struct Location: Sendable, Equatable, Hashable, Encodable {
    public var line: Int
    public var column: Int?

    public init(line: Int, column: Int?) {
        self.line = line
        self.column = column
    }
}
