import Foundation
import Gherkin
import OrchestrateModel
import OrchestrateTesting
import Testing

/// The official Cucumber parser (PyPI `gherkin-official`, this version; `make test` installs it) and the feature files
/// it judges: the corpus of `Corpus/good` (every construct of the grammar, no parse error) and `Corpus/bad` (parse
/// errors of every kind), and mutants of them generated here.
enum Oracle {
    static let version = "42.0.1"
    static let here = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    static let script = here.appendingPathComponent("oracle.py").path
    static let hint = "make test installs gherkin-official \(version) from PyPI"

    static func corpus(_ folder: String) -> [String] {
        let directory = here.appendingPathComponent("Corpus/\(folder)")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".feature") }.sorted().map { "\(folder)/\($0)" }
    }

    static let good = corpus("good")
    static let bad = corpus("bad")

    static func path(_ name: String) -> String { here.appendingPathComponent("Corpus/\(name)").path }

    /// What the official parser makes of each file (pickles, or parse errors), normalized, by path. One run for all of
    /// them.
    static func envelopes(of paths: [String]) throws -> [String: [NSDictionary]] {
        var result: [String: [NSDictionary]] = [:]
        let output = try Python.run([script, version] + paths, hint: hint)
        for line in output.split(separator: "\n") {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let path = try #require(object["path"] as? String)
            result[path] = try #require(object["envelopes"] as? [Any]).map {
                stripped(locatedByMessage($0)) as! NSDictionary
            }
        }
        return result
    }

    /// What orchestrate's parser makes of a file, normalized as the oracle's envelopes are.
    static func ours(_ source: String) throws -> [NSDictionary] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try Envelope.of(source: source, uri: "feature").map { envelope in
            stripped(try JSONSerialization.jsonObject(with: encoder.encode(envelope))) as! NSDictionary
        }
    }

    /// A parse error located where its message says. The Python parser's error for an unknown `# language:` keeps the
    /// indentation in its message's column ("(1:2): Language not supported: xx") but not in its location (column 1);
    /// orchestrate's says 2 in both.
    private static func locatedByMessage(_ envelope: Any) -> Any {
        guard var object = envelope as? [String: Any], var error = object["parseError"] as? [String: Any],
            var source = error["source"] as? [String: Any], let message = error["message"] as? String,
            message.hasPrefix("("), let end = message.firstIndex(of: ")")
        else { return envelope }
        let numbers = message[message.index(after: message.startIndex)..<end].split(separator: ":").compactMap {
            Int($0)
        }
        guard numbers.count == 2 else { return envelope }
        source["location"] = numbers[1] == 0 ? ["line": numbers[0]] : ["line": numbers[0], "column": numbers[1]]
        error["source"] = source
        object["parseError"] = error
        return object
    }

    /// Without what is generated (ids), names the file (uri) or says nothing (null, as absent: the Python parser writes
    /// `"type": null` for a pickle step of an outline that starts with And or But).
    private static func stripped(_ value: Any) -> Any {
        if let dictionary = value as? [String: Any] {
            var result: [String: Any] = [:]
            for (key, value) in dictionary
            where !["id", "astNodeIds", "astNodeId", "uri"].contains(key) && !(value is NSNull) {
                result[key] = stripped(value)
            }
            return result
        }
        if let array = value as? [Any] { return array.map(stripped) }
        return value
    }

    /// Compares orchestrate's envelopes for `source` with the oracle's, recording one issue per difference.
    static func compare(
        _ source: String, expected: [NSDictionary]?, name: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let expected = try #require(expected, "the oracle said nothing of \(name)", sourceLocation: sourceLocation)
        let ours = try ours(source)
        #expect(
            ours.count == expected.count, "\(name): \(ours.count) envelopes, the official parser \(expected.count)",
            sourceLocation: sourceLocation)
        for (index, (mine, theirs)) in zip(ours, expected).enumerated() where mine != theirs {
            let numbered = source.components(separatedBy: "\n").enumerated().map { "  \($0 + 1)| \($1)" }.joined(
                separator: "\n")
            Issue.record(
                "\(name), envelope \(index + 1):\n  ours:   \(mine)\n  oracle: \(theirs)\nthe file:\n\(numbered)",
                sourceLocation: sourceLocation)
            return
        }
    }

    static func isParseError(_ envelope: NSDictionary) -> Bool { envelope["parseError"] != nil }
}

/// Feature files made from the corpus by small edits a person makes by mistake: lines deleted, duplicated, swapped or
/// re-indented; keywords, tags, table rows, doc-string fences and comments inserted; the file cut short. A fixed seed
/// per file makes every run check the same mutants.
struct Mutator {
    private var random: SeededRandom

    init(name: String) {
        random = SeededRandom(name: name)
    }

    static let insertions: [String] = [
        "Feature: inserted", "Rule: inserted", "Background:", "Scenario: inserted", "Scenario Outline: with <x>",
        "Examples:",
        "Example: inserted", "Given an inserted step", "And <x>", "But not this", "* a star", "When",
        "Then <x> and <y>",
        "@t", "@a @b", "@bad tag", "@x #comment", "@", "| a |", "| a | b |", "| <x> |", "|", "| a \\|", "| open",
        "|  |  |",
        "\"\"\"", "```", "\"\"\"json", "```text", "\\\"\\\"\\\"", "# comment", "# language: fr", "#language:xx", "#",
        "",
        "Soit un pas", "Funktionalität: deutsch", "   ", "\t",
    ]
    static let indents = ["", " ", "  ", "    ", "      ", "\t", " \t ", "          "]

    mutating func mutants(of source: String, count: Int) -> [String] {
        (0..<count).map { _ in mutate(source) }
    }

    private mutating func mutate(_ source: String) -> String {
        var lines = source.components(separatedBy: "\n")
        for _ in 0..<(1 + pick(3)) {
            let at = pick(lines.count)
            switch pick(7) {
            case 0: if lines.count > 1 { lines.remove(at: at) }
            case 1: lines.insert(lines[at], at: at)
            case 2: if at + 1 < lines.count { lines.swapAt(at, at + 1) }
            case 3: lines[at] = Self.indents[pick(Self.indents.count)] + lines[at].drop { $0 == " " || $0 == "\t" }
            case 4, 5:
                lines.insert(
                    Self.indents[pick(Self.indents.count)] + Self.insertions[pick(Self.insertions.count)], at: at)
            default:
                // Cut short, possibly in the middle of a line (and of a CRLF).
                let text = lines.joined(separator: "\n")
                let bytes = Array(text.utf8)
                let cut = String(decoding: bytes.prefix(pick(bytes.count + 1)), as: UTF8.self)
                lines = cut.components(separatedBy: "\n")
            }
        }
        return lines.joined(separator: "\n")
    }

    private mutating func pick(_ bound: Int) -> Int { random.below(bound) }
}

@Suite("Gherkin conformance (the official Cucumber parser as the oracle)")
struct ConformanceTests {
    /// Mutants per corpus file.
    static let mutantsPerFile = 20

    /// The corpus and its mutants, written once into a temporary folder, with the oracle's verdict on each.
    /// Immutable once made (the dictionaries are parsed JSON, never changed).
    struct Judged: @unchecked Sendable {
        var sources: [String: String]
        var mutants: [String: [String]]
        var oracle: [String: [NSDictionary]]
    }

    /// Made once, on a thread of its own (the oracle is a Python program the tests wait for): every test awaits the
    /// same task, none holds one of the cooperative pool's few threads meanwhile.
    static let judging = Task { try await blockingOffPool { try judge() } }

    static func judge() throws -> Judged {
        let folder = "/tmp/orch-gherkin-\(getpid())"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var sources: [String: String] = [:]
        var mutants: [String: [String]] = [:]
        var files: [String: String] = [:]
        for name in Oracle.good + Oracle.bad {
            let source = try String(contentsOfFile: Oracle.path(name), encoding: .utf8)
            sources[name] = source
            var mutator = Mutator(name: name)
            mutants[name] = mutator.mutants(of: source, count: mutantsPerFile)
            files[name] = Oracle.path(name)
            for (index, mutant) in mutants[name]!.enumerated() {
                let path = "\(folder)/\(name.replacingOccurrences(of: "/", with: "_")).\(index).feature"
                try Data(mutant.utf8).write(to: URL(fileURLWithPath: path))
                files["\(name)#\(index)"] = path
            }
        }
        let byPath = try Oracle.envelopes(of: Array(files.values))
        return Judged(sources: sources, mutants: mutants, oracle: files.mapValues { byPath[$0] ?? [] })
    }

    @Test("the corpus is there, and the official parser agrees what is good and what is bad")
    func corpus() async throws {
        #expect(
            Oracle.good.count >= 20 && Oracle.bad.count >= 12, "good: \(Oracle.good.count), bad: \(Oracle.bad.count)")
        let judged = try await Self.judging.value
        for name in Oracle.good {
            #expect(
                judged.oracle[name]?.contains(where: Oracle.isParseError) == false,
                "\(name) is not good to the official parser")
        }
        for name in Oracle.bad {
            #expect(judged.oracle[name]?.contains(where: Oracle.isParseError) == true, "\(name) parses without errors")
        }
    }

    @Test(
        "every corpus file compiles to the official parser's pickles, or its parse errors",
        arguments: Oracle.good + Oracle.bad)
    func file(name: String) async throws {
        let judged = try await Self.judging.value
        try Oracle.compare(judged.sources[name] ?? "", expected: judged.oracle[name], name: name)
    }

    @Test("mutants of a corpus file compile as the official parser compiles them", arguments: Oracle.good + Oracle.bad)
    func mutants(name: String) async throws {
        let judged = try await Self.judging.value
        for (index, mutant) in (judged.mutants[name] ?? []).enumerated() {
            try Oracle.compare(mutant, expected: judged.oracle["\(name)#\(index)"], name: "\(name) mutant \(index)")
        }
    }

    @Test("the keywords of every language orchestrate knows are Cucumber's")
    func dialects() async throws {
        let path = try await Python.run([Oracle.script, Oracle.version, "--languages"], hint: Oracle.hint)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let reference = try #require(try JSONSerialization.jsonObject(with: data) as? [String: [String: Any]])
        #expect(Dialect.all.count >= 6)
        for (code, dialect) in Dialect.all {
            let entry = try #require(reference[code], "\(code) is not a Cucumber language")
            #expect(entry["name"] as? String == dialect.name && entry["native"] as? String == dialect.native)
            let pairs: [(String, [String])] = [
                ("feature", dialect.feature), ("rule", dialect.rule), ("background", dialect.background),
                ("scenario", dialect.scenario),
                ("scenarioOutline", dialect.scenarioOutline), ("examples", dialect.examples), ("given", dialect.given),
                ("when", dialect.when), ("then", dialect.then), ("and", dialect.and), ("but", dialect.but),
            ]
            for (key, keywords) in pairs { #expect(entry[key] as? [String] == keywords, "\(code).\(key)") }
        }
    }
}
