import Foundation
import OrchestrateModel

/// A scenario's recording on disk: a HAR 1.2 file.
package struct Cassette: Sendable, Equatable {
    package var path: String
    package var har: HAR

    package init(path: String, extras: CassetteExtras) {
        self.path = path
        self.har = HAR(log: HAR.Log(orchestrate: extras))
    }

    package var entries: [HAR.Entry] { har.log.entries }
    package var extras: CassetteExtras { har.log.orchestrate ?? CassetteExtras() }

    /// Reads a cassette; a missing, corrupt or newer-format file is a ``MockServerError`` naming it.
    package static func load(_ path: String) throws(MockServerError) -> Cassette {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw MockServerError(.cassette, "\(path): no such cassette (record it first: --mode record)")
        }
        let har: HAR
        do {
            har = try JSONDecoder().decode(HAR.self, from: data)
        } catch let DecodingError.dataCorrupted(context) {
            throw MockServerError(
                .cassette, "\(path): not valid JSON (\(context.debugDescription)\(Self.describe(context.codingPath)))")
        } catch let DecodingError.keyNotFound(key, context) {
            throw MockServerError(
                .cassette,
                "\(path): not a HAR file: \(Self.describe(context.codingPath + [key]).dropFirst(4)) is missing")
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context) {
            throw MockServerError(
                .cassette, "\(path): not a HAR file: wrong type at \(Self.describe(context.codingPath).dropFirst(4))")
        } catch {
            throw MockServerError(.cassette, "\(path): unreadable cassette: \(error)")
        }
        let format = har.log.orchestrate?.formatVersion ?? CassetteExtras.currentFormat
        guard format <= CassetteExtras.currentFormat else {
            throw MockServerError(
                .cassette,
                "\(path): cassette format \(format) is newer than this orchestrate understands (\(CassetteExtras.currentFormat)); upgrade orchestrate"
            )
        }
        return Cassette(path: path, har: har)
    }

    init(path: String, har: HAR) {
        self.path = path
        self.har = har
    }

    /// Writes the cassette atomically (a temporary file renamed over the old one), creating folders.
    package func save() throws(MockServerError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            try AtomicFile.write(try encoder.encode(har), to: path)
        } catch {
            throw MockServerError(.cassette, "\(path): cannot write the cassette: \(error)")
        }
    }

    private static func describe(_ path: [any CodingKey]) -> String {
        guard !path.isEmpty else { return "" }
        return " at " + path.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
    }
}

/// What goes wrong in the mock server that the user must fix.
package struct MockServerError: CodedError {
    package typealias Code = ErrorCode<MockServerError>

    package var code: Code
    package var message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}

extension ErrorCode where Domain == MockServerError {
    /// A cassette is missing, corrupt or of an unknown format.
    package static let cassette = Self("cassette")
    /// The server cannot listen.
    package static let bind = Self("bind")
}
