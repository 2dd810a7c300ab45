/// The syntax tree of a feature file, shaped as Cucumber's `GherkinDocument` message.
package struct GherkinDocument: Sendable {
    package var feature: Feature?
    package var comments: [Comment]
    /// How many ids the tree used (pickles take the following ones).
    var idsUsed = 0
}

package struct Comment: Sendable {
    package var location: Location
    package var text: String
}

package struct Tag: Sendable {
    package var id: String
    package var location: Location
    /// With its `@`.
    package var name: String
}

package struct Feature: Sendable {
    package enum Child: Sendable {
        case background(Background)
        case scenario(Scenario)
        case rule(Rule)
    }

    package var location: Location
    package var tags: [Tag]
    package var language: String
    package var keyword: String
    package var name: String
    package var description: String
    package var children: [Child]
}

package struct Rule: Sendable {
    package enum Child: Sendable {
        case background(Background)
        case scenario(Scenario)
    }

    package var id: String
    package var location: Location
    package var tags: [Tag]
    package var keyword: String
    package var name: String
    package var description: String
    package var children: [Child]
}

package struct Background: Sendable {
    package var id: String
    package var location: Location
    package var keyword: String
    package var name: String
    package var description: String
    package var steps: [Step]
}

/// A Scenario (or Example); with Examples blocks, a Scenario Outline (or Template).
package struct Scenario: Sendable {
    package var id: String
    package var location: Location
    package var tags: [Tag]
    package var keyword: String
    package var name: String
    package var description: String
    package var steps: [Step]
    package var examples: [Examples]
}

package struct Examples: Sendable {
    package var id: String
    package var location: Location
    package var tags: [Tag]
    package var keyword: String
    package var name: String
    package var description: String
    package var tableHeader: TableRow?
    package var tableBody: [TableRow]
}

package struct Step: Sendable {
    package var id: String
    package var location: Location
    /// As written, with its trailing space (`Given `).
    package var keyword: String
    package var keywordType: KeywordType?
    package var text: String
    package var dataTable: DataTable?
    package var docString: DocString?
}

package struct DocString: Sendable {
    package var location: Location
    package var content: String
    /// `"""` or `` ``` ``.
    package var delimiter: String
    package var mediaType: String?
}

package struct DataTable: Sendable {
    package var location: Location
    package var rows: [TableRow]
}

package struct TableRow: Sendable {
    package var id: String
    package var location: Location
    package var cells: [TableCell]
}

package struct TableCell: Sendable {
    package var location: Location
    package var value: String
}

/// A place in a feature file; the column is absent at the end of the file.
package struct Location: Sendable, Equatable, Hashable, Encodable {
    package var line: Int
    package var column: Int?

    package init(line: Int, column: Int?) {
        self.line = line
        self.column = column
    }
}
