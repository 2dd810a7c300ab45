import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Left-aligned columns for people; machines get `--format json`.
///
/// On a terminal the table fits its width: columns that hold one value in every row move under the table ("in every
/// row: PROJECT shop"), then the cells of the `elidable` columns lose their middle (`tests/test_c…::test_total`), then
/// the last column is cut. Elsewhere (a pipe, a file, CI) every cell is printed whole.
package struct TextTable {
    package var header: [String]
    package var rows: [[String]] = []
    /// The columns (by header) whose cells may be shortened to fit a terminal.
    package var elidable: Set<String> = []

    package init(header: [String], rows: [[String]] = [], elidable: Set<String> = []) {
        self.header = header
        self.rows = rows
        self.elidable = elidable
    }

    /// The width of the terminal standard output is, when it is one (`COLUMNS` when the terminal does not say).
    static let terminalWidth: Int? = {
        guard isatty(STDOUT_FILENO) == 1 else { return nil }
        var size = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        return ProcessInfo.processInfo.environment["COLUMNS"].flatMap(Int.init).flatMap { $0 > 0 ? $0 : nil }
    }()

    package func render() -> String { render(fitting: Self.terminalWidth) }

    /// The table, at most `width` columns wide where it can be made so (`nil`: as wide as its cells).
    package func render(fitting width: Int?) -> String {
        var table = self
        var folded: [String] = []
        if let width, table.width > width, rows.count >= 2 {
            // The widest constant columns first, until it fits; the last column stays (it is never padded).
            let constant = header.indices.dropLast().filter { column in
                rows.allSatisfy { $0[column] == rows[0][column] }
            }.sorted { table.columnWidth($0) > table.columnWidth($1) }
            var gone: [Int] = []
            for column in constant where table.width(without: gone) > width {
                gone.append(column)
            }
            for column in gone.sorted(by: >) {
                folded.insert("\(header[column]) \(rows[0][column])", at: 0)
                table.header.remove(at: column)
                for index in table.rows.indices { table.rows[index].remove(at: column) }
            }
        }
        if let width, table.width > width {
            table.elide(to: width)
        }
        let widths = table.header.indices.map(table.columnWidth)
        var lines = ([table.header] + table.rows).map { row in
            row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell.padded(to: widths[index])
            }.joined(separator: "  ")
        }
        if let width {
            lines = lines.map { $0.count > width ? String($0.prefix(max(width - 1, 1))) + "…" : $0 }
        }
        if !folded.isEmpty {
            // Said once, wrapped at the width between its items.
            var line = "in every row:"
            for (index, item) in folded.enumerated() {
                let piece = " " + item + (index < folded.count - 1 ? "," : "")
                if let width, line.count + piece.count > width, line.count > 2 {
                    lines.append(line)
                    line = " "
                }
                line += piece
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }

    private func columnWidth(_ column: Int) -> Int {
        ([header] + rows).map { $0[column].count }.max() ?? 0
    }

    /// The width of the widest line: the columns padded, two spaces between them.
    private var width: Int { width(without: []) }

    private func width(without gone: [Int]) -> Int {
        let columns = header.indices.filter { !gone.contains($0) }
        return columns.map(columnWidth).reduce(0, +) + 2 * max(columns.count - 1, 0)
    }

    /// Shortens the widest elidable column by a character at a time until the table fits or none can give more (never
    /// below its header, nor 12 characters).
    private mutating func elide(to width: Int) {
        var widths = header.indices.map(columnWidth)
        let columns = header.indices.filter { elidable.contains(header[$0]) }
        while widths.reduce(0, +) + 2 * max(header.count - 1, 0) > width {
            guard
                let widest = columns.filter({ widths[$0] > max(header[$0].count, 12) }).max(by: {
                    widths[$0] < widths[$1]
                })
            else { break }
            widths[widest] -= 1
        }
        for column in columns {
            for index in rows.indices { rows[index][column] = Self.elided(rows[index][column], to: widths[column]) }
        }
    }

    /// `text` in at most `width` characters: its start and end, `…` between them.
    package static func elided(_ text: String, to width: Int) -> String {
        guard text.count > width, width > 1 else { return text }
        let head = (width - 1) / 2
        return String(text.prefix(head)) + "…" + String(text.suffix(width - 1 - head))
    }
}
