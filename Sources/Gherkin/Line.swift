/// One line of a feature file, measured in Unicode scalars (Cucumber counts columns in code points).
struct Line {
    let number: Int
    /// The line without its line feed (a carriage return of CRLF stays, as whitespace).
    let text: [Unicode.Scalar]
    /// The leading whitespace's length.
    let indent: Int

    init(number: Int, scalars: some Collection<Unicode.Scalar>) {
        self.number = number
        text = Array(scalars)
        indent = self.text.prefix { $0.isGherkinSpace }.count
    }

    /// The text without leading whitespace.
    var trimmed: ArraySlice<Unicode.Scalar> { text[indent...] }
    var isEmpty: Bool { indent == text.count }

    func starts(with prefix: String) -> Bool { trimmed.starts(with: prefix.unicodeScalars) }

    /// The text after `length` scalars of the trimmed text, stripped on both sides.
    func rest(after length: Int) -> String { String(trimmed.dropFirst(length).strippedOfSpace) }

    /// The line with `indentToRemove` leading scalars removed, or trimmed when its indent is smaller.
    func text(removingIndent indentToRemove: Int) -> String {
        indentToRemove > indent ? String(trimmed) : String(text[indentToRemove...])
    }

    /// The cells of a table row: `| a | b\|c |`; `\|`, `\\` and `\n` are escapes; what precedes the first
    /// and follows the last `|` is not a cell.
    var cells: [(column: Int, text: String)] {
        let row = trimmed.strippedOfSpace
        var cells: [(column: Int, text: String)] = []
        var cell: [Unicode.Scalar] = []
        var column = 0
        var start = 1
        var first = true
        var index = row.startIndex
        while index < row.endIndex {
            let scalar = row[index]
            index += 1
            column += 1
            switch scalar {
            case "|":
                if first { first = false } else { cells.append(Self.cell(cell, start: start + indent)) }
                cell = []
                start = column + 1
            case "\\":
                guard index < row.endIndex else {
                    cell.append("\\")
                    continue
                }
                let escaped = row[index]
                index += 1
                column += 1
                if escaped == "n" {
                    cell.append("\n")
                } else {
                    if escaped != "|" && escaped != "\\" { cell.append("\\") }
                    cell.append(escaped)
                }
            default:
                cell.append(scalar)
            }
        }
        return cells
    }

    /// A cell's text without surrounding whitespace (an escaped new line stays), and the column where it starts.
    private static func cell(_ scalars: [Unicode.Scalar], start: Int) -> (column: Int, text: String) {
        let leading = scalars.prefix { $0.isGherkinSpace && $0 != "\n" }.count
        var body = scalars[leading...]
        while let last = body.last, last.isGherkinSpace, last != "\n" { body.removeLast() }
        return (start + leading, String(body))
    }

    struct WhitespaceInTag: Error { let column: Int }

    /// The tags of a tag line with their columns; a comment (`#` after whitespace) ends the line.
    func tags() throws(WhitespaceInTag) -> [(column: Int, text: String)] {
        var uncommented = Array(trimmed.strippedOfSpace)
        if let hash = uncommented.indices.dropFirst().first(where: {
            uncommented[$0] == "#" && uncommented[$0 - 1].isGherkinSpace
        }) {
            uncommented = Array(uncommented[..<(hash - 1)])
        }
        let items = uncommented[...].strippedOfSpace.split(separator: "@", omittingEmptySubsequences: false).dropFirst()
        var column = indent + 1
        var tags: [(column: Int, text: String)] = []
        for item in items {
            let name = item.strippedOfSpace
            if name.contains(where: \.isGherkinSpace) { throw WhitespaceInTag(column: column) }
            tags.append((column, "@" + String(name)))
            column += item.count + 1
        }
        return tags
    }
}

extension Unicode.Scalar {
    /// Whitespace as Python's `str.isspace` (and so Cucumber's reference parser) sees it.
    var isGherkinSpace: Bool { properties.isWhitespace || (0x1C...0x1F).contains(value) }
}

extension ArraySlice<Unicode.Scalar> {
    var strippedOfSpace: ArraySlice<Unicode.Scalar> {
        var slice = self
        while let first = slice.first, first.isGherkinSpace { slice.removeFirst() }
        while let last = slice.last, last.isGherkinSpace { slice.removeLast() }
        return slice
    }
}

extension String {
    init(_ scalars: some Sequence<Unicode.Scalar>) {
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars)
        self.init(view)
    }
}
