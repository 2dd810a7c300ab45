import Foundation

/// A scenario as the run executes it: a command with its own limits and environment.
package struct Scenario: Sendable, Codable, Hashable, Identifiable {
    /// Stable across runs: history, quarantine and expected durations hang on it.
    package var id: String
    package var name: String
    /// The shell command (run with `/bin/sh -c`), templates already filled in.
    package var command: String
    package var tags: [String]
    /// Milliseconds before the whole process group is ended.
    package var timeoutMilliseconds: Int64
    /// Added to the environment of every attempt.
    package var environment: [String: String]
    /// Where the scenario is defined (file and 1-based line), for messages and `{uri}`/`{line}`.
    package var uri: String?
    package var line: Int?
    /// For an example row of a Scenario Outline, the outline's own line (`file:line` of the outline selects
    /// all its rows).
    package var definitionLine: Int?
    /// The report the command writes into its artifacts folder that says how each test went; `nil`: its exit status
    /// alone says.
    package var results: ResultsFormat?
    /// Set when the scenario is one test of a suite whose runner takes several at once: it may run with others of the
    /// same batch command in one process.
    package var batch: Batch?

    package init(
        id: String,
        name: String,
        command: String,
        tags: [String] = [],
        timeoutMilliseconds: Int64,
        environment: [String: String] = [:],
        uri: String? = nil,
        line: Int? = nil,
        definitionLine: Int? = nil,
        results: ResultsFormat? = nil,
        batch: Batch? = nil
    ) {
        self.id = id
        self.name = name
        self.command = command
        self.tags = tags
        self.timeoutMilliseconds = timeoutMilliseconds
        self.environment = environment
        self.uri = uri
        self.line = line
        self.definitionLine = definitionLine
        self.results = results
        self.batch = batch
    }
}

extension Scenario {
    /// The scenario's random seed (`ORCHESTRATE_SEED`, kept in its cassette): stable across runs, so a
    /// failure can be reproduced with the same randoms.
    package var seed: UInt32 {
        var hash: UInt32 = 0x811c_9dc5
        for byte in id.utf8 {
            hash ^= UInt32(byte)
            hash = hash &* 0x0100_0193
        }
        return hash
    }
}

extension Scenario {
    /// The mode the scenario runs in: a mode tag on the scenario (`record`, `replay`, `live`, `mock`,
    /// `hybrid`, with or without `@`) wins over the run's mode.
    package func mode(inRun runMode: Mode) -> Mode {
        for tag in tags {
            let name = tag.hasPrefix("@") ? String(tag.dropFirst()) : tag
            if let mode = Mode(rawValue: name.lowercased()), mode != .compare { return mode }
        }
        return runMode
    }
}

extension Scenario {
    /// Whether the scenario is one test of a runner's suite whose steps and names are the runner's results: a test of a
    /// batch, or of a suite whose reports hold no steps (JUnit, SwiftPM's, Xcode's). A Cucumber scenario run alone
    /// keeps its Gherkin steps and names.
    package var isRunnerTest: Bool { batch != nil || results.map { !$0.hasSteps } ?? false }
}

/// A report of test results a runner writes (``Scenario/results``).
package enum ResultsFormat: String, Sendable, Codable, Hashable, CaseIterable {
    /// JUnit XML (`*.xml`): pytest, jest-junit, Gradle, xcpretty, xcbeautify, `swift test --xunit-output`.
    case junit
    /// Cucumber JSON (`*.json`): cucumber-js, cucumber-ruby, behave.
    case cucumberJSON = "cucumber-json"
    /// Cucumber Messages NDJSON (`*.ndjson`).
    case cucumberMessages = "cucumber-messages"
    /// What a SwiftPM test binary says: XCTest's console output and the Swift Testing event stream (`*.jsonl`).
    case swiftpm
    /// What `xcrun xcresulttool get test-results tests` says of a result bundle (`*.xcresult.json`), Xcode 16's and
    /// 26's.
    case xcresult

    /// The formats a user names in `suite.results` (``swiftpm`` belongs to `suite.swiftpm`).
    package static var configurable: [ResultsFormat] { [.junit, .cucumberJSON, .cucumberMessages] }

    /// Whether a test's report holds its steps (Cucumber's), rather than only its outcome.
    package var hasSteps: Bool { self == .cucumberJSON || self == .cucumberMessages }

    /// How the names of its files end.
    package var suffixes: [String] {
        switch self {
        case .junit: [".xml"]
        case .cucumberJSON: [".json"]
        case .cucumberMessages: [".ndjson"]
        case .swiftpm: [".jsonl", ".xctest.log"]
        case .xcresult: [".xcresult.json", ".xcresult"]
        }
    }
}

/// How the tests of a suite run several to a process: a command template that takes the batch's ids, and the bounds of
/// a batch. Tests with the same template may share an attempt's process; each keeps its own attempt, result and
/// history.
package struct Batch: Sendable, Codable, Hashable {
    /// The template: `{ids}` (the ids as shell words), `{ids-regex}` (one shell word, `^(id|id)$` with the ids
    /// escaped), `{ids-comma}` (one shell word, the ids joined by commas), `{ids-swift-testing}` (Swift Testing's
    /// `--filter` regex, which also takes the source location after an id), `{ids-only-testing}` (a shell word
    /// `-only-testing:id` per id, for xcodebuild).
    package var command: String
    /// Tests per process at most.
    package var size: Int
    /// Expected milliseconds per process at most (tests never seen count as nothing).
    package var milliseconds: Int64
    /// The processes the suite's batches are meant to take (``BatchSizing``, fewer than the slots where the runner's
    /// start-up outweighs its tests): each batch fills up to its size, the end of the queue is not shared out among the
    /// slots, and only as many slots start. `nil`: the end of the queue is shared among all the run's slots.
    package var processes: Int?
    /// How long the runner took to list the suite's tests when the run was planned: its start-up, as far as a suite
    /// without history can tell (``BatchSizing``).
    package var listedMilliseconds: Int64?
    /// How many tests the runner has for this command in all, where the run holds every one of them: a batch of all of
    /// them is run without naming them (`{ids-swift-testing}` becomes `.`). Swift Testing tries its `--filter` against
    /// every test of the binary, which costs hundreds of milliseconds for a few hundred ids. `nil`: always named.
    package var whole: Int?
    /// `true`: the runner runs a process's tests several at once itself, on every processor (Swift Testing does), so a
    /// few processes keep the host busy.
    package var parallel: Bool?

    package init(command: String, size: Int, milliseconds: Int64) {
        self.command = command
        self.size = size
        self.milliseconds = milliseconds
    }

    /// The placeholders a batch command takes.
    package static let placeholders = [
        "{ids}", "{ids-regex}", "{ids-comma}", "{ids-swift-testing}", "{ids-only-testing}",
    ]

    /// Whether `template` takes a batch of ids.
    package static func takesIDs(_ template: String) -> Bool { placeholders.contains { template.contains($0) } }

    /// The command that runs `ids`, in this order: the template filled in one pass (``CommandTemplate``).
    package func command(for ids: [String]) -> String {
        CommandTemplate.fill(command) { words(for: ids, $0) }
    }

    /// A test's own command (a batch of one, as ``command(for:)`` makes it), for each test of a suite: the template is
    /// read once, here.
    package func ownCommands() -> @Sendable (_ id: String) -> String {
        let template = CommandTemplate.Compiled(command) { Self.names.contains($0) }
        return { [self] id in template.fill { words(for: [id], $0) ?? [] } }
    }

    private static let names = Set(placeholders.map { $0.dropFirst().dropLast() })

    /// The words `placeholder` (its name, without braces) stands for in the command that runs `ids`; `nil` for a name
    /// that is no placeholder.
    private func words(for ids: [String], _ placeholder: Substring) -> [String]? {
        switch placeholder {
        case "ids": ids
        case "ids-regex": ["^(\(ids.map(Self.regexEscaped).joined(separator: "|")))$"]
        case "ids-comma": [ids.joined(separator: ",")]
        case "ids-swift-testing": [ids.count == whole ? "." : "^\(Self.alternation(of: ids))(/|$)"]
        case "ids-only-testing": ids.map { "-only-testing:\($0)" }
        default: nil
        }
    }

    /// The most of `ids` a batch of this command holds, for each shell word its ids make to stay under `bytes` (Linux
    /// takes at most 128 KiB in one): Swift Testing's filter alone shares the ids' common beginnings, and may hold them
    /// all.
    package func largestSize(of ids: [String], bytes: Int) -> Int {
        let others = Self.placeholders.filter { $0 != "{ids-swift-testing}" }
        if command.contains("{ids-swift-testing}"), !others.contains(where: command.contains),
            Self.alternation(of: ids).utf8.count + 16 <= bytes
        {
            return max(ids.count, 1)
        }
        return max(bytes / ((ids.map(\.utf8.count).max() ?? 0) + 8), 1)
    }

    /// A group that matches exactly `ids`, with their common beginnings shared — `(?:M\.S/(?:a\(\)|b\(\)))` — so that
    /// a regex engine that tries alternatives one by one (Swift's, behind Swift Testing's `--filter`, which it tries
    /// against every test of the binary) rules out a test at its first differing character instead of trying every id:
    /// with 881 ids, a flat alternation cost a batch half a second before its first test.
    package static func alternation(of ids: [String]) -> String {
        // ASCII is a byte per character, but for a carriage return and line feed, which make one: such ids branch by
        // byte, cheaper than by Character (hundreds of ids at every planning); others by character.
        if ids.allSatisfy({ $0.utf8.allSatisfy { $0 < 0x80 && $0 != UInt8(ascii: "\r") } }) {
            // One id is its own path down the tree.
            if ids.count == 1 { return "(?:" + regexEscaped(ids[0]) + ")" }
            return alternation(of: ids.map { Array($0.utf8) }) { byte, text in
                if isRegexSpecial(byte) { text.append(UInt8(ascii: "\\")) }
                text.append(byte)
            }
        }
        return alternation(of: ids.map { Array($0) }) { character, text in
            if character.utf8.count == 1, let byte = character.asciiValue {
                if isRegexSpecial(byte) { text.append(UInt8(ascii: "\\")) }
                text.append(byte)
            } else {
                // Swift's regex parser reads its pattern by Character: a combining mark written as it is would join
                // the character before it, the pattern's own `|` or `(` or an id's quote, into one it refuses or
                // misreads. Written as its scalars' numbers, nothing joins, and it still matches as one Character.
                text += "\\u{".utf8
                text += character.unicodeScalars.map { String($0.value, radix: 16) }.joined(separator: " ").utf8
                text.append(UInt8(ascii: "}"))
            }
        }
    }

    /// The group of ``alternation(of:)`` for ids as arrays of `Element`s, each written (escaped) by `write`. The ids are
    /// sorted, so that those sharing a beginning are neighbours: each group of the pattern is a range of them, and no
    /// tree is built.
    private static func alternation<Element: Comparable & Hashable>(
        of ids: [[Element]], write: (Element, inout [UInt8]) -> Void
    ) -> String {
        let ids = Set(ids).sorted { $0.lexicographicallyPrecedes($1) }
        var text = Array("(?:".utf8)
        // The ids of `range` share their first `depth` elements.
        func pattern(_ range: Range<Int>, depth: Int) {
            var depth = depth
            // A run of elements every id of the range continues with needs no group (sorted: the first and the last
            // agree only when all do); an id that ends here stops it.
            while ids[range.lowerBound].count > depth, ids[range.upperBound - 1].count > depth,
                ids[range.lowerBound][depth] == ids[range.upperBound - 1][depth]
            {
                write(ids[range.lowerBound][depth], &text)
                depth += 1
            }
            // Sorted, an id that ends here comes first.
            let ends = ids[range.lowerBound].count == depth
            let first = ends ? range.lowerBound + 1 : range.lowerBound
            guard first < range.upperBound else { return }
            text += "(?:".utf8
            var start = first
            while start < range.upperBound {
                let element = ids[start][depth]
                var end = start + 1
                while end < range.upperBound, ids[end][depth] == element { end += 1 }
                if start > first { text.append(UInt8(ascii: "|")) }
                write(element, &text)
                pattern(start..<end, depth: depth + 1)
                start = end
            }
            text += (ends ? "|)" : ")").utf8
        }
        if !ids.isEmpty { pattern(0..<ids.count, depth: 0) }
        text.append(UInt8(ascii: ")"))
        return String(decoding: text, as: UTF8.self)
    }

    private static func isRegexSpecial(_ byte: UInt8) -> Bool { #"\^$.|?*+()[]{}"#.utf8.contains(byte) }

    /// `text` matched literally by a regular expression (POSIX extended and ICU alike): each of `\^$.|?*+()[]{}`
    /// escaped, byte by byte.
    package static func regexEscaped(_ text: String) -> String {
        CommandTemplate.prefixing(text, where: isRegexSpecial)
    }
}
