import Foundation

/// A scenario ready to run, as Cucumber Messages' `pickle` carries it (what `orchestrate gherkin pickles`
/// prints and what a `suite.gherkin` scenario gets as `ORCHESTRATE_PICKLE`).
public struct Pickle: Sendable, Decodable {
    public var id: String
    public var uri: String
    public var name: String
    public var language: String
    public var tags: [Tag]
    public var steps: [Step]
    public var location: Location?

    public struct Tag: Sendable, Decodable {
        public var name: String
    }

    public struct Location: Sendable, Decodable {
        public var line: Int
        public var column: Int?
    }

    public struct Step: Sendable, Decodable {
        public var id: String
        public var text: String
        /// `Context` (Given), `Action` (When), `Outcome` (Then); `Unknown` for `*` before any other.
        public var type: String?
        public var argument: Argument?

        /// The English keyword of the step's kind, for reports (pickles do not keep the keyword as written).
        public var keyword: String {
            switch type {
            case "Context": "Given "
            case "Action": "When "
            case "Outcome": "Then "
            default: "* "
            }
        }
    }

    public struct Argument: Sendable, Decodable {
        public var docString: DocString?
        public var dataTable: DataTable?
    }

    public struct DocString: Sendable, Decodable {
        public var content: String
        public var mediaType: String?
    }

    public struct DataTable: Sendable, Decodable {
        public var rows: [Row]
        public struct Row: Sendable, Decodable {
            public var cells: [Cell]
        }
        public struct Cell: Sendable, Decodable {
            public var value: String
        }
    }

    /// A pickle from its JSON (the message itself, or an envelope `{"pickle": …}`).
    public init(json: String) throws {
        let data = Data(json.utf8)
        struct Envelope: Decodable { var pickle: Pickle }
        if let envelope = try? JSONDecoder().decode(Envelope.self, from: data) {
            self = envelope.pickle
            return
        }
        do {
            self = try JSONDecoder().decode(Pickle.self, from: data)
        } catch {
            throw OrchestrateKitError(.pickle, "not a Cucumber Messages pickle: \(error)")
        }
    }

    /// The pickles of NDJSON envelopes (`orchestrate gherkin pickles FILE...`); other envelopes are skipped.
    public static func pickles(ndjson: String) throws -> [Pickle] {
        struct Envelope: Decodable { var pickle: Pickle? }
        var pickles: [Pickle] = []
        for (index, line) in ndjson.split(whereSeparator: \.isNewline).enumerated()
        where !line.allSatisfy(\.isWhitespace) {
            do {
                if let pickle = try JSONDecoder().decode(Envelope.self, from: Data(line.utf8)).pickle {
                    pickles.append(pickle)
                }
            } catch {
                throw OrchestrateKitError(.pickle, "line \(index + 1) is not a Cucumber Messages envelope: \(error)")
            }
        }
        return pickles
    }
}
