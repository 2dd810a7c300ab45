/// What a step definition is given: the step's arguments, typed by their parameters, and its doc string
/// or data table.
public struct StepMatch: Sendable {
    /// The step's text.
    public let text: String
    /// One per parameter (`{int}` an `.int`) or capture group of a regular expression (a `.string`).
    public let values: [StepValue]
    public let docString: String?
    /// Rows of cells, the header row first.
    public let dataTable: [[String]]?

    /// The argument at `index` as text.
    public subscript(index: Int) -> String {
        index < values.count ? values[index].description : ""
    }

    /// The argument at `index` as an integer (an `{int}`, or a regex group of digits).
    public func int(_ index: Int) throws -> Int {
        switch value(index) {
        case .int(let value): return value
        case .string(let text): if let value = Int(text) { return value }
        case .double(let value): if let exact = Int(exactly: value) { return exact }
        }
        throw OrchestrateKitError(.argument, "argument \(index + 1) of \"\(text)\" is \(self[index]), not an integer")
    }

    /// The argument at `index` as a number.
    public func double(_ index: Int) throws -> Double {
        switch value(index) {
        case .int(let value): return Double(value)
        case .double(let value): return value
        case .string(let text): if let value = Double(text) { return value }
        }
        throw OrchestrateKitError(.argument, "argument \(index + 1) of \"\(text)\" is \(self[index]), not a number")
    }

    /// The data table as one dictionary per row after the header (`| email | name |`).
    public var tableRows: [[String: String]] {
        guard let dataTable, let header = dataTable.first else { return [] }
        return dataTable.dropFirst().map { Dictionary(zip(header, $0), uniquingKeysWith: { first, _ in first }) }
    }

    private func value(_ index: Int) -> StepValue {
        index < values.count ? values[index] : .string("")
    }
}
