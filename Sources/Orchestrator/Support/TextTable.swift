/// Left-aligned columns for people; machines get `--format json`.
struct TextTable {
    var header: [String]
    var rows: [[String]] = []

    func render() -> String {
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell.padded(to: widths[index])
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }
}
