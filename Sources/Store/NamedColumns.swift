import PostgresNIO

/// A result row read by column name, as the query's SELECT names its columns (`AS name` where an expression has none):
/// what each value is stays beside the SQL that makes it.
///
/// ```swift
/// for try await row in rows {
///     let column = NamedColumns(row)
///     lines.append(Line(id: try column("scenario_id"), score: try column("score")))
/// }
/// ```
struct NamedColumns {
    private let row: PostgresRandomAccessRow

    init(_ row: PostgresRow) {
        self.row = row.makeRandomAccess()
    }

    /// The value of `column` as `T` (an optional for a column that may be NULL); a column the query does not have is a
    /// ``StoreError`` naming it.
    func callAsFunction<T: PostgresDecodable>(_ column: String, as type: T.Type = T.self) throws -> T {
        guard row.contains(column) else { throw StoreError(.missingColumn, "the query has no column \(column)") }
        return try row[column].decode(T.self)
    }
}
