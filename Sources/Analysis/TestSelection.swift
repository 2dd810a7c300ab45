import OrchestrateModel

/// Which tests a change can break (`orchestrate run --changed-since REV`), from each test's footprint: what it touched
/// on its last run at a revision the base reaches (its own files, feature file and cassette, the endpoints of its
/// exchanges). Pure: the caller brings the footprints, what changed since each footprint's revision, and the history.
///
/// A test runs when it is new, failed or flaked in the last runs, has no footprint the base reaches, or when a changed
/// file is in its footprint, serves an endpoint it called (``Rules/sources``), or is one no footprint tracks (a source
/// file a test may run without naming it: every test runs). A changed file the rules say changes everything (the
/// configuration) runs every test. The rest is left out, each with its reason, and a share of it may run as a sample.
package struct TestSelection: Sendable {
    /// What the configuration says of changed files.
    package struct Rules: Sendable {
        /// Files whose change runs every test (orchestrate.yml itself, a lock file).
        package var everything: [PathGlob] = []
        /// Files no test can be broken by (documentation).
        package var ignore: [PathGlob] = []
        /// Files that serve endpoints: a change to one runs the tests that called them.
        package var sources: [Source] = []

        package init(everything: [PathGlob] = [], ignore: [PathGlob] = [], sources: [Source] = []) {
            self.everything = everything
            self.ignore = ignore
            self.sources = sources
        }
    }

    /// Files (a handler's source, an API description) and the endpoints they serve.
    package struct Source: Sendable {
        package var files: [PathGlob]
        package var endpoints: [EndpointPattern]

        package init(files: [PathGlob], endpoints: [EndpointPattern]) {
            self.files = files
            self.endpoints = endpoints
        }
    }

    /// A test of the suite as history knows it.
    package struct Test: Sendable {
        package var id: String
        /// Its footprint at a revision the base reaches, newest first (`nil`: none).
        package var footprint: Footprint?
        /// It was planned in this project before.
        package var known: Bool
        /// It failed or flaked in the last runs.
        package var failedRecently: Bool
        /// What history expects it to take.
        package var expectedMilliseconds: Int64?
        /// Its own files as the suite has them now (a new test's, a test that moved), as footprints write them.
        package var files: [String]
        /// It names no file of its own (a command in orchestrate.yml): any changed file may be what it runs.
        package var opaque: Bool

        package init(
            id: String, footprint: Footprint?, known: Bool, failedRecently: Bool, expectedMilliseconds: Int64? = nil,
            files: [String] = [], opaque: Bool = false
        ) {
            self.id = id
            self.footprint = footprint
            self.known = known
            self.failedRecently = failedRecently
            self.expectedMilliseconds = expectedMilliseconds
            self.files = files
            self.opaque = opaque
        }
    }

    /// Why a test runs.
    package enum Reason: Sendable, Equatable, CustomStringConvertible {
        case new
        case failedRecently
        case noFootprint
        case touches(String)
        case calls(endpoint: String, servedBy: String)
        case untracked(String)
        case opaque(String)
        case everything(String)
        case sampled

        package var description: String {
            switch self {
            case .new: "new test"
            case .failedRecently: "failed or flaked in the last runs"
            case .noFootprint: "no footprint at a revision the base reaches"
            case .touches(let file): "touches \(file)"
            case .calls(let endpoint, let file): "calls \(endpoint), served by \(file)"
            case .untracked(let file): "\(file) changed, and no footprint says which tests it can break"
            case .opaque(let file): "\(file) changed, and the test names no file of its own"
            case .everything(let file): "\(file) changed, which every test depends on"
            case .sampled: "sampled from the tests left out (--sample)"
            }
        }
    }

    /// A test left out, and why.
    package struct Skip: Sendable, Equatable {
        package var id: String
        package var reason: String
        package var expectedMilliseconds: Int64?
    }

    package struct Decision: Sendable {
        /// The tests to run, in the order given, each with its reason.
        package var selected: [(id: String, reason: Reason)] = []
        package var skipped: [Skip] = []
        /// Expected milliseconds of the tests left out, from history (those never timed count nothing).
        package var savedMilliseconds: Int64 { skipped.reduce(0) { $0 + ($1.expectedMilliseconds ?? 0) } }
    }

    package var rules: Rules

    package init(rules: Rules) {
        self.rules = rules
    }

    /// `changed`: the files changed since each footprint's revision, as paths from the repository's root (files a
    /// footprint revision has no entry for: none changed); `hunks`: by revision and file, the lines of the file at that
    /// revision a change touched (a file without: all of it). `sample`: the share of the tests left out that run all the
    /// same, drawn with `generator`.
    package func decide<Generator: RandomNumberGenerator>(
        _ tests: [Test], changed: [String: Set<String>], hunks: [String: [String: LineSet]] = [:], sample: Double = 0,
        using generator: inout Generator
    ) -> Decision {
        // Files some footprint or test names as its own, whatever the test: a change to one is accounted for by those
        // tests. Files only coverage names (`covered`) are accounted for only to tests whose coverage knows their kind.
        var tracked = Set<String>()
        var trackedFolders: [String] = []
        var covered = Set<String>()
        for test in tests {
            // A footprint's own files are those its coverage did not add (they have no lines).
            let own =
                test.files
                + (test.footprint.map { footprint in footprint.files.filter { footprint.lines[$0] == nil } } ?? [])
            for file in own {
                if file.hasSuffix("/") { trackedFolders.append(file) } else { tracked.insert(file) }
            }
            if let footprint = test.footprint { covered.formUnion(footprint.lines.keys) }
        }
        // Every endpoint some footprint called: a mapping whose patterns match none of them cannot say which tests a
        // file it names serves, so a change to that file is one no footprint tracks.
        let called = Set(tests.compactMap(\.footprint).flatMap(\.endpoints))
        let reachable = rules.sources.map { source in
            called.contains(EndpointPattern.every)
                || source.endpoints.contains { pattern in called.contains(where: pattern.matches) }
        }
        // The lines some test ran, by revision and file: where coverage saw a statement start (a statement that spans
        // lines is reported on its first). Only files a hunk changed are read for it.
        var statements: [String: [String: [ClosedRange<Int>]]] = [:]
        for footprint in tests.compactMap(\.footprint) {
            guard let changedLines = hunks[footprint.revision] else { continue }
            for (file, lines) in footprint.lines where changedLines[file] != nil {
                statements[footprint.revision, default: [:]][file, default: []] += lines.ranges
            }
        }
        // What each distinct change means, worked out once per revision.
        var meanings: [String: Meaning] = [:]
        let reasons = tests.map { test in
            reason(for: test) { revision in
                if let known = meanings[revision] { return known }
                var meaning = Meaning(
                    changed[revision] ?? [], rules: rules, reachable: reachable,
                    owned: { file in tracked.contains(file) || trackedFolders.contains { file.hasPrefix($0) } },
                    covered: covered.contains)
                meaning.reach(hunks[revision] ?? [:], statements: statements[revision] ?? [:])
                meanings[revision] = meaning
                return meaning
            }
        }
        let left = reasons.indices.filter { reasons[$0] == nil }
        var sampled = Set<Int>()
        if sample > 0, !left.isEmpty {
            let count = min(left.count, max(1, Int((Double(left.count) * sample).rounded())))
            sampled = Set(left.shuffled(using: &generator).prefix(count))
        }
        var decision = Decision()
        for (index, test) in tests.enumerated() {
            if let reason = reasons[index] ?? (sampled.contains(index) ? .sampled : nil) {
                decision.selected.append((test.id, reason))
                continue
            }
            let files = changed[test.footprint?.revision ?? ""]?.count ?? 0
            decision.skipped.append(
                Skip(
                    id: test.id,
                    reason: files == 0
                        ? "nothing changed since its footprint's revision"
                        : files == 1
                            ? "its footprint does not touch the changed file"
                            : "its footprint touches none of the \(files) changed files",
                    expectedMilliseconds: test.expectedMilliseconds))
        }
        return decision
    }

    /// Why `test` runs, or `nil` when its footprint says the change cannot break it.
    private func reason(for test: Test, meaning: (String) -> Meaning) -> Reason? {
        guard test.known else { return .new }
        if test.failedRecently { return .failedRecently }
        guard let footprint = test.footprint else { return .noFootprint }
        let meaning = meaning(footprint.revision)
        if let file = meaning.everything { return .everything(file) }
        if let file = meaning.first(touchedBy: footprint.files + test.files, ran: footprint.lines) {
            return .touches(file)
        }
        for (pattern, file) in meaning.endpoints {
            if let endpoint = footprint.endpoints.first(where: pattern.matches) {
                return .calls(endpoint: endpoint, servedBy: file)
            }
        }
        if let file = meaning.untracked.first ?? meaning.coveredOnly.first(where: { !footprint.covers($0) }) {
            return .untracked(file)
        }
        // A test that names no file of its own (a command in orchestrate.yml) may run any file that changed.
        if test.opaque, let file = meaning.relevant { return .opaque(file) }
        return nil
    }

    /// What the files changed since one revision mean, sorted so that reasons name the same file every time.
    private struct Meaning {
        var files: [String]
        var changed: Set<String>
        var everything: String?
        /// Each endpoint pattern a changed file serves, with the first such file.
        var endpoints: [(EndpointPattern, String)] = []
        /// The changed files no footprint names and no mapping serves, sorted.
        var untracked: [String] = []
        /// The changed files only coverage names (no test as its own), unmapped, sorted: a test whose coverage does
        /// not know their kind may run them unseen.
        var coveredOnly: [String] = []
        /// The first changed file that is neither ignored nor only a server's (what an opaque test may depend on).
        var relevant: String?

        /// `reachable`: for each of the rules' sources, whether any footprint called an endpoint it serves.
        init(
            _ changed: Set<String>, rules: Rules, reachable: [Bool], owned: (String) -> Bool,
            covered: (String) -> Bool
        ) {
            self.changed = changed
            files = changed.sorted()
            everything = files.first { file in rules.everything.contains { $0.matches(file) } }
            var seen = Set<EndpointPattern>()
            for file in files where !rules.ignore.contains(where: { $0.matches(file) }) {
                let serving = rules.sources.indices.filter { rules.sources[$0].files.contains { $0.matches(file) } }
                for pattern in serving.flatMap({ rules.sources[$0].endpoints }) where seen.insert(pattern).inserted {
                    endpoints.append((pattern, file))
                }
                // A file served only by mappings that match no recorded endpoint is as good as unmapped.
                let unmapped = !serving.contains { reachable[$0] }
                if unmapped, !owned(file) {
                    if covered(file) { coveredOnly.append(file) } else { untracked.append(file) }
                }
                if unmapped, relevant == nil { relevant = file }
            }
        }

        /// By file, the lines a test must have run for a change to touch it (a changed file without: any line).
        var reached: [String: [ClosedRange<Int>]] = [:]

        /// Each hunk `a…b` (``TestSelection/decide(_:changed:hunks:sample:using:)``) reaches from the line before it,
        /// or from the start of the statement it may be part of (the last line at or before `a` that some test ran,
        /// `statements`), to the line after it: a test that ran none of those lines ran none of what changed.
        mutating func reach(_ hunks: [String: LineSet], statements: [String: [ClosedRange<Int>]]) {
            for (file, touched) in hunks {
                let starts = LineSet(ranges: statements[file] ?? [])
                reached[file] = touched.ranges.map { hunk in
                    min(
                        hunk.lowerBound - 1, starts.last(atOrBefore: hunk.lowerBound) ?? hunk.lowerBound)...(hunk
                        .upperBound + 1)
                }
            }
        }

        /// The first changed file (in sorted order) that `owned` names, itself or under a folder it names; a file of
        /// which `ran` has the lines the test ran, only where the change reaches one of them (``reach(_:statements:)``).
        func first(touchedBy owned: [String], ran: [String: LineSet]) -> String? {
            var found: String?
            for entry in owned {
                if let lines = ran[entry], let touched = reached[entry], !touched.contains(where: lines.intersects) {
                    continue
                }
                let candidate: String?
                if entry.hasSuffix("/") {
                    // The first changed path under the folder: files are sorted, so it follows the folder's name.
                    let low = files.partitioningIndex { $0 >= entry }
                    candidate = low < files.endIndex && files[low].hasPrefix(entry) ? files[low] : nil
                } else {
                    candidate = changed.contains(entry) ? entry : nil
                }
                if let candidate, found.map({ candidate < $0 }) ?? true { found = candidate }
            }
            return found
        }
    }
}
