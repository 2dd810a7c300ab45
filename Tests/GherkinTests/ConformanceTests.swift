import Foundation
import Gherkin
import Testing

/// Cucumber's own parser test data (../shared/conformance/gherkin, or $ORCHESTRATE_CONFORMANCE/gherkin).
enum Conformance {
    static let directory: URL = {
        if let root = ProcessInfo.processInfo.environment["ORCHESTRATE_CONFORMANCE"] {
            return URL(fileURLWithPath: root).appendingPathComponent("gherkin")
        }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("../shared/conformance/gherkin").standardizedFileURL
    }()

    static func features(_ folder: String) -> [String] { features(in: directory.appendingPathComponent(folder)) }

    static func features(in folder: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { $0.hasSuffix(".feature") }.sorted()
    }

    /// An NDJSON document as JSON values, without what Cucumber generates (ids) or names per machine (uri).
    static func normalized(_ ndjson: String) throws -> [NSDictionary] {
        try ndjson.split(separator: "\n").map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
            return stripped(object) as! NSDictionary
        }
    }

    private static func stripped(_ value: Any) -> Any {
        if let dictionary = value as? [String: Any] {
            var result: [String: Any] = [:]
            for (key, value) in dictionary where !["id", "astNodeIds", "astNodeId", "uri"].contains(key) { result[key] = stripped(value) }
            return result
        }
        if let array = value as? [Any] { return array.map(stripped) }
        return value
    }

    static func ndjson(_ envelopes: [Envelope]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try envelopes.map { String(decoding: try encoder.encode($0), as: UTF8.self) }.joined(separator: "\n")
    }
}

@Suite("Gherkin conformance (Cucumber's testdata)")
struct ConformanceTests {
    @Test("the reference data is there")
    func dataPresent() {
        #expect(Conformance.features("good").count > 40, "no conformance data at \(Conformance.directory.path)")
        #expect(Conformance.features("bad").count > 10)
    }

    @Test("every good file compiles to Cucumber's pickles", arguments: Conformance.features("good"))
    func good(name: String) throws {
        let folder = Conformance.directory.appendingPathComponent("good")
        try Self.compare(folder.appendingPathComponent(name), with: folder.appendingPathComponent(name + ".pickles.ndjson"))
    }

    @Test("every bad file yields Cucumber's errors, lines and columns", arguments: Conformance.features("bad"))
    func bad(name: String) throws {
        let folder = Conformance.directory.appendingPathComponent("bad")
        try Self.compare(folder.appendingPathComponent(name), with: folder.appendingPathComponent(name + ".errors.ndjson"))
    }

    /// Feature files of our own (Tests/GherkinTests/Oracle) with what the official parser (PyPI gherkin-official)
    /// printed for them; scripts/gherkin-oracle.sh regenerates the expectations.
    static let oracle = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Oracle")
    static var oracleFeatures: [String] { Conformance.features(in: oracle) }

    @Test("our own feature files compile as the official parser compiles them", arguments: oracleFeatures)
    func oracle(name: String) throws {
        try Self.compare(Self.oracle.appendingPathComponent(name), with: Self.oracle.appendingPathComponent(name + ".ndjson"))
    }

    /// Our envelopes for a feature file against the expected NDJSON, envelope by envelope, without ids and uri.
    static func compare(_ feature: URL, with expectation: URL) throws {
        let source = try String(contentsOf: feature, encoding: .utf8)
        let ours = try Conformance.normalized(Conformance.ndjson(Envelope.of(source: source, uri: feature.lastPathComponent)))
        let expected = try Conformance.normalized(String(contentsOf: expectation, encoding: .utf8))
        #expect(ours.count == expected.count)
        for (mine, theirs) in zip(ours, expected) { #expect(mine == theirs) }
    }

    @Test("the keywords of every language orchestrate knows are Cucumber's")
    func dialects() throws {
        let data = try Data(contentsOf: Conformance.directory.appendingPathComponent("gherkin-languages.json"))
        let reference = try JSONSerialization.jsonObject(with: data) as! [String: [String: Any]]
        #expect(Dialect.all.count >= 6)
        for (code, dialect) in Dialect.all {
            let entry = try #require(reference[code], "\(code) is not a Cucumber language")
            #expect(entry["name"] as? String == dialect.name && entry["native"] as? String == dialect.native)
            let pairs: [(String, [String])] = [
                ("feature", dialect.feature), ("rule", dialect.rule), ("background", dialect.background), ("scenario", dialect.scenario),
                ("scenarioOutline", dialect.scenarioOutline), ("examples", dialect.examples), ("given", dialect.given),
                ("when", dialect.when), ("then", dialect.then), ("and", dialect.and), ("but", dialect.but),
            ]
            for (key, keywords) in pairs { #expect(entry[key] as? [String] == keywords, "\(code).\(key)") }
        }
    }
}
