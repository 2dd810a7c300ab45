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

    static func features(_ folder: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent(folder).path)) ?? []
        return names.filter { $0.hasSuffix(".feature") }.sorted()
    }

    static func read(_ folder: String, _ name: String) throws -> String {
        try String(contentsOf: directory.appendingPathComponent(folder).appendingPathComponent(name), encoding: .utf8)
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
        let source = try Conformance.read("good", name)
        let ours = try Conformance.normalized(Conformance.ndjson(Envelope.of(source: source, uri: "good/" + name)))
        let expected = try Conformance.normalized(Conformance.read("good", name + ".pickles.ndjson"))
        #expect(ours.count == expected.count)
        for (mine, theirs) in zip(ours, expected) { #expect(mine == theirs) }
    }

    @Test("every bad file yields Cucumber's errors, lines and columns", arguments: Conformance.features("bad"))
    func bad(name: String) throws {
        let source = try Conformance.read("bad", name)
        let ours = try Conformance.normalized(Conformance.ndjson(Envelope.of(source: source, uri: "bad/" + name)))
        let expected = try Conformance.normalized(Conformance.read("bad", name + ".errors.ndjson"))
        #expect(ours.count == expected.count)
        for (mine, theirs) in zip(ours, expected) { #expect(mine == theirs) }
    }

    /// Feature files of our own (Tests/GherkinTests/Oracle) with what the official parser (PyPI gherkin-official)
    /// printed for them; scripts/gherkin-oracle.sh regenerates the expectations.
    static let oracle = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Oracle")
    static var oracleFeatures: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: oracle.path)) ?? []).filter { $0.hasSuffix(".feature") }.sorted()
    }

    @Test("our own feature files compile as the official parser compiles them", arguments: oracleFeatures)
    func oracle(name: String) throws {
        let source = try String(contentsOf: Self.oracle.appendingPathComponent(name), encoding: .utf8)
        let ours = try Conformance.normalized(Conformance.ndjson(Envelope.of(source: source, uri: name)))
        let expected = try Conformance.normalized(String(contentsOf: Self.oracle.appendingPathComponent(name + ".ndjson"), encoding: .utf8))
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
