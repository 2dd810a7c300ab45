import Analysis
import Foundation
import Logging
import MockServer
import OrchestrateModel
import Reports
import Store

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `run --changed-since REV` and `run --changed FILE…`: the planned scenarios cut to those the change can break
/// (``TestSelection``), from the footprints earlier runs recorded (``record(_:settings:runs:)``) and what git says
/// changed since each footprint's revision. Paths are compared from the repository's root.
package struct ChangeSelection {
    /// What changed.
    package enum Change: Sendable, Equatable {
        /// Everything between a revision and the work tree (commits, staged and unstaged changes, new files).
        case since(String)
        /// These files (absolute paths).
        case files([String])
    }

    let settings: RunSettings
    let runs: RunStore
    let logger: Logger

    /// The most commits behind the base a footprint's revision may be, and the most distinct revisions the footprints
    /// of one selection may be at (a git diff each).
    static let reachableCommits = 5000
    static let revisions = 32

    /// What a plan takes from the selection.
    struct Chosen {
        var scenarios: [Scenario]
        var description: String
        var skips: [RunReport.Skipped]
        var sampled: Set<String>
        /// Said before the run: what was chosen, and why when everything runs.
        var note: String
        /// What the rules decided, and why (likely failures come from it too).
        var decision: TestSelection.Decision
    }

    /// `scenarios` cut to those `change` can break, with the rest as skips. A revision git does not know, or a folder
    /// outside git, is a ``UsageError``.
    func choose(_ scenarios: [Scenario], change: Change) async throws -> Chosen {
        let found = try await decide(scenarios, change: change, sample: settings.sample)
        let decision = found.decision
        for (id, reason) in decision.selected {
            logger.info(
                "selected",
                metadata: ["test": "\(id)", "reason": "\(reason)"])
        }
        guard found.footprints else {
            return Chosen(
                scenarios: scenarios, description: found.label, skips: [], sampled: [],
                note:
                    "\(found.label): every test runs — no footprint at a revision \(found.base) reaches "
                    + "(a run at a clean revision records them)",
                decision: decision)
        }
        let planned = Dictionary(scenarios.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let selected = Set(decision.selected.map(\.id))
        let saved = Double(decision.savedMilliseconds) / 1000
        return Chosen(
            scenarios: scenarios.filter { selected.contains($0.id) },
            description: "\(found.label), \(found.files) file\(found.files == 1 ? "" : "s")",
            skips: decision.skipped.map {
                RunReport.Skipped(
                    id: $0.id, name: planned[$0.id]?.name ?? $0.id, uri: planned[$0.id]?.uri,
                    runnerTest: planned[$0.id]?.isRunnerTest ?? false, reason: $0.reason,
                    expectedMilliseconds: $0.expectedMilliseconds)
            },
            sampled: Set(decision.selected.filter { $0.reason == .sampled }.map(\.id)),
            note:
                "\(found.label): \(selected.count) of \(scenarios.count) tests run (\(Self.counted(decision.selected))); "
                + "\(decision.skipped.count) left out, about \(String(format: "%.1f", saved)) s saved by history",
            decision: decision)
    }

    /// The tests likely to fail (`run --order likely-failing`): new, failed or flaked in the last runs, or with a
    /// footprint `change` touches (`nil`: what changed since each footprint's revision, up to the work tree); said in a
    /// note. Outside git, only history counts.
    func likelyFailing(_ scenarios: [Scenario], change: Change?) async throws -> (ids: Set<String>, note: String) {
        let decision: TestSelection.Decision
        do {
            decision = try await decide(scenarios, change: change ?? .since("HEAD"), sample: 0).decision
        } catch let error as UsageError where change == nil {
            // No git, or no commit yet: the same rules without footprints (new tests and those that failed lately still
            // go first).
            logger.info("likely failures from history alone", metadata: ["why": "\(error)"])
            let (known, failing) = try await runs.selectionHistory(scenarios.map(\.id), project: settings.project)
            let tests = scenarios.map { scenario in
                TestSelection.Test(
                    id: scenario.id, footprint: nil, known: known.contains(scenario.id),
                    failedRecently: failing.contains(scenario.id))
            }
            var generator = SystemRandomNumberGenerator()
            decision = TestSelection(rules: TestSelection.Rules()).decide(tests, changed: [:], using: &generator)
        }
        return Self.likely(in: decision, of: scenarios.count)
    }

    /// The tests `decision` selected for a reason to expect a failure, in a note; of `count` tests.
    static func likely(in decision: TestSelection.Decision, of count: Int) -> (ids: Set<String>, note: String) {
        let likely = decision.selected.filter { _, reason in
            switch reason {
            case .new, .failedRecently, .touches, .calls: true
            case .noFootprint, .untracked, .opaque, .everything, .sampled: false
            }
        }
        return (
            Set(likely.map(\.id)),
            "likely failures first: \(likely.count) of \(count) tests"
                + (likely.isEmpty ? "" : " (\(Self.counted(likely)))") + ", each group longest first"
        )
    }

    /// What ``TestSelection`` decided for `scenarios`, and what it was decided from.
    private struct Found {
        var decision: TestSelection.Decision
        /// What changed, as said to people (`changed since main (3f2a…)`), and the base's short revision.
        var label: String
        var base: String
        /// Whether any test had a footprint the base reaches, and how many files changed since their revisions.
        var footprints: Bool
        var files: Int
    }

    private func decide(_ scenarios: [Scenario], change: Change, sample: Double) async throws -> Found {
        let directory = settings.directory
        guard
            let root = await Self.git(["rev-parse", "--show-toplevel"], in: directory).map(Self.trimmed).map(Self.real)
        else {
            throw UsageError(.badValue, "\(Self.flag(change)) needs a git repository: \(directory) is not in one")
        }
        let base: String?
        let label: String
        switch change {
        case .since(let revision):
            guard !revision.hasPrefix("-"), !revision.isEmpty,
                let resolved = await Self.git(["rev-parse", "--verify", "--quiet", "\(revision)^{commit}"], in: root)
                    .map(Self.trimmed), !resolved.isEmpty
            else {
                throw UsageError(
                    .notFound,
                    "--changed-since \(TerminalText.escaped(revision)): no such commit in \(root) (a branch, tag or commit git knows)"
                )
            }
            base = resolved
            label = "changed since \(TerminalText.escaped(revision)) (\(resolved.prefix(10)))"
        case .files(let files):
            base = await Self.git(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], in: root).map(Self.trimmed)
            label = "\(files.count) changed file\(files.count == 1 ? "" : "s") (--changed)"
        }
        let ids = scenarios.map(\.id)
        async let stored = runs.footprints(ids, project: settings.project)
        async let history = runs.selectionHistory(ids, project: settings.project)
        async let expected = runs.expectedDurations(ids, project: settings.project)
        let reachable: Set<Substring> =
            if let base,
                let list = await Self.git(
                    ["rev-list", "--max-count=\(Self.reachableCommits)", base], in: root, maximumBytes: 1 << 20)
            {
                Set(list.split(separator: "\n"))
            } else {
                []
            }
        var footprints = try await stored.compactMapValues { candidates in
            candidates.first { reachable.contains(Substring($0.revision)) }
        }
        // A git diff per footprint revision: the revisions most footprints are at, up to a bound; a test whose
        // footprint is at another has none here (it runs).
        let kept = Set(
            Dictionary(grouping: footprints.values, by: \.revision).sorted { $0.value.count > $1.value.count }
                .prefix(Self.revisions).map(\.key))
        footprints = footprints.filter { kept.contains($0.value.revision) }
        let (known, failing) = try await history
        let times = try await expected
        // What changed since each footprint's revision (the same files for --changed), and where in the files the
        // footprints have the lines of.
        var changed: [String: Set<String>] = [:]
        var hunks: [String: [String: LineSet]] = [:]
        let revisions = Set(footprints.values.map(\.revision))
        switch change {
        case .files(let files):
            var paths = Set<String>()
            for file in files {
                guard let path = Self.relative(Self.real(file), to: root), !path.isEmpty else {
                    throw UsageError(
                        .badValue, "--changed \(TerminalText.escaped(file)): not a file in the repository at \(root)")
                }
                paths.insert(path)
            }
            for revision in revisions { changed[revision] = paths }
        case .since:
            let untracked =
                revisions.isEmpty
                ? [] : try await Self.paths(["ls-files", "-z", "--others", "--exclude-standard"], in: root)
            let covered = Set(footprints.values.flatMap(\.lines.keys))
            for revision in revisions {
                let files = try await Self.paths(
                    ["diff", "--name-only", "-z", "--no-renames", "--ignore-submodules=none", revision, "--"], in: root)
                changed[revision] = files.union(untracked)
                let wanted = files.intersection(covered)
                if !wanted.isEmpty { hunks[revision] = await Self.hunks(since: revision, of: wanted, in: root) }
            }
        }
        let owned = Self.ownPaths(settings: settings, root: root)
        let prefix = Self.relative(Self.real(directory), to: root) ?? ""
        let rules = Self.rules(settings.selectionRules, configPath: settings.configPath, prefix: prefix, root: root)
        let tests = scenarios.map { scenario in
            let own = owned(scenario)
            return TestSelection.Test(
                id: scenario.id,
                footprint: footprints[scenario.id],
                known: known.contains(scenario.id), failedRecently: failing.contains(scenario.id),
                expectedMilliseconds: times[scenario.id], files: own.files, opaque: own.opaque)
        }
        var generator = SystemRandomNumberGenerator()
        return Found(
            decision: TestSelection(rules: rules).decide(
                tests, changed: changed, hunks: hunks, sample: sample, using: &generator),
            label: label, base: base.map { String($0.prefix(10)) } ?? "HEAD", footprints: !footprints.isEmpty,
            files: changed.values.reduce(into: Set<String>()) { $0.formUnion($1) }.count)
    }

    /// The reasons counted, most first: `2 touching a changed file, 1 new`.
    private static func counted(_ selected: [(id: String, reason: TestSelection.Reason)]) -> String {
        var counts: [String: Int] = [:]
        for (_, reason) in selected { counts[kind(of: reason), default: 0] += 1 }
        let text = counts.sorted { $0.value > $1.value || ($0.value == $1.value && $0.key < $1.key) }
            .map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        return text.isEmpty ? "none" : text
    }

    /// A reason's kind, for the counts said before the run.
    private static func kind(of reason: TestSelection.Reason) -> String {
        switch reason {
        case .new: "new"
        case .failedRecently: "failed recently"
        case .noFootprint: "without a footprint"
        case .touches: "touching a changed file"
        case .calls: "calling a changed endpoint"
        case .untracked: "for a file no footprint tracks"
        case .opaque: "naming no file of their own"
        case .everything: "for a file every test depends on"
        case .sampled: "sampled"
        }
    }

    /// The configured globs from the repository's root (they are written from the config file's folder), with the
    /// config file itself among the files every test depends on.
    static func rules(
        _ selection: OrchestrateConfig.Selection, configPath: String, prefix: String, root: String
    ) -> TestSelection.Rules {
        func glob(_ pattern: String) -> PathGlob {
            guard !prefix.isEmpty else { return PathGlob(pattern) }
            let name = !pattern.dropLast().contains("/") && !pattern.hasPrefix("/")
            return PathGlob(prefix + (name ? "/**/" : "/") + pattern.drop { $0 == "/" })
        }
        var rules = TestSelection.Rules(
            everything: selection.everything.map(glob), ignore: selection.ignore.map(glob),
            sources: selection.endpoints.map {
                TestSelection.Source(files: $0.files.map(glob), endpoints: $0.endpoints)
            })
        if let config = relative(real(configPath), to: root) { rules.everything.append(PathGlob("/" + config)) }
        return rules
    }

    /// Records, after run `report` was judged at a clean revision, what each of its tests that ran touched: its own
    /// files (a feature file, the file its id names, a Swift test target's folder), its cassette, and (read from its
    /// exchanges) the endpoints it called. A run at a revision with changes not committed, or outside git, records
    /// nothing: its files are not those of any revision.
    static func record(_ report: RunReport, settings: RunSettings, runs: RunStore) async throws {
        guard let revision = report.gitRevision, !revision.contains("+"),
            let root = await git(["rev-parse", "--show-toplevel"], in: settings.directory).map(trimmed).map(real),
            // Still at that revision, clean: a checkout or an edit during the run would file them under another.
            await HostFacts.gitRevision(in: settings.directory) == revision
        else { return }
        let owned = ownPaths(settings: settings, root: root)
        // The source files each test ran, from the coverage reports its processes left (paths from where they ran):
        // those that exist at the revision, with what ran outside any test and what coverage only measured.
        let reports = try await runs.coverage(report.runID)
        let directory = real(settings.directory)
        let prefix = relative(directory, to: root).map { $0.isEmpty ? "" : $0 + "/" } ?? ""
        var exists: [String: Bool] = [:]
        func existing(_ file: String) -> Bool {
            if let known = exists[file] { return known }
            let found = FileManager.default.fileExists(atPath: "\(directory)/\(file)")
            exists[file] = found
            return found
        }
        // The reports that hold each context, so that a test's reports are found by its names, not by reading them all.
        var holding: [String: Set<Int64>] = [:]
        for (key, contexts) in reports {
            for context in contexts.keys where !context.isEmpty { holding[context, default: []].insert(key) }
        }
        var files: [String: [String]] = [:]
        var lines: [String: [String: LineSet]] = [:]
        var covers: [String: [String]] = [:]
        for entry in report.scenarios where entry.result != .pending {
            let id = entry.scenario.id
            let own = owned(entry.scenario).files
            files[id] = own
            let names = CoverageContexts.contexts(naming: id)
            // Each report the test is in: its own lines, and what every test of that process ran or it measured.
            let ran = Set(names.flatMap { holding[$0] ?? [] }).flatMap { key -> [(String, LineSet)] in
                guard let report = reports[key] else { return [] }
                return names.compactMap { report[$0] }.flatMap { $0 } + (report[""] ?? [:]).map { $0 }
            }
            guard !ran.isEmpty else { continue }
            var ranges: [String: [ClosedRange<Int>]] = [:]
            for (file, ranLines) in ran where existing(file) { ranges[prefix + file, default: []] += ranLines.ranges }
            let covered = ranges.mapValues { LineSet(ranges: $0) }
            files[id] = own + Set(covered.keys).subtracting(own).sorted()
            lines[id] = covered.filter { !own.contains($0.key) }
            covers[id] = ["py"]
        }
        try await runs.saveFootprints(
            report.runID, project: settings.project, revision: revision, files: files, lines: lines, covers: covers)
    }

    /// A test's own files (``ownFiles(of:directory:configPath:cassette:)``) from the repository's `root`, and
    /// whether it names none but its cassette (a command in orchestrate.yml: any file may be what it runs).
    static func ownPaths(settings: RunSettings, root: String) -> (Scenario) -> (files: [String], opaque: Bool) {
        let directory = real(settings.directory)
        let configPath = real(settings.configPath)
        let cassette = MockSessions.cassettes(in: settings.recordings)
        return { scenario in
            let recording = real(cassette(scenario))
            let files = ownFiles(of: scenario, directory: directory, configPath: configPath, cassette: recording)
            return (files.compactMap { relative($0, to: root) }, !files.contains { $0 != recording })
        }
    }

    /// A test's own files, absolute, that exist (a folder ends with `/`): its feature file (not orchestrate.yml,
    /// which a listed test's place is), the file its id names (`tests/test_cart.py::test_pay`), the folder of the
    /// Swift test target its id names (`CartTests.PayTests/testPay` → `Tests/CartTests/`), and its cassette.
    static func ownFiles(of scenario: Scenario, directory: String, configPath: String, cassette: String) -> [String] {
        var files: [String] = []
        func existing(_ path: String, folder: Bool = false) {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue == folder
            else { return }
            files.append(folder ? path + "/" : path)
        }
        if let uri = scenario.uri {
            let path = real(OrchestrateConfig.resolve(uri, against: directory))
            if path != configPath { existing(path) }
        }
        if let named = RunReport.ScenarioEntry.file(namedBy: scenario.id) {
            existing(real(OrchestrateConfig.resolve(named, against: directory)))
        }
        if let target = scenario.id.split(separator: ".", maxSplits: 1).first, target.count < scenario.id.count,
            !target.contains("/"), !target.isEmpty
        {
            existing("\(directory)/Tests/\(target)", folder: true)
        }
        existing(cassette)
        return files
    }

    /// By file of `files`, the lines of it at `revision` that the change up to the work tree touched (`git diff -U0`'s
    /// hunks: a changed range, or for lines added, the line they follow); a file whose hunks cannot be read (a name
    /// git quotes, a diff too long) has none, so all of it counts as touched.
    static func hunks(since revision: String, of files: Set<String>, in root: String) async -> [String: LineSet] {
        guard
            let diff = await git(
                [
                    "--literal-pathspecs", "diff", "-U0", "--no-renames", "--no-color", "--no-ext-diff",
                    "--src-prefix=a/", "--dst-prefix=b/", "--ignore-submodules=none", revision, "--",
                ] + files.sorted(), in: root, maximumBytes: 64 << 20)
        else { return [:] }
        return parseHunks(diff).filter { files.contains($0.key) }
    }

    /// `git diff -U0`'s hunks, by the file's old path: `@@ -a,b +c,d @@` touches lines a…a+b-1 of it, or line a when it
    /// adds lines after it (b = 0).
    package static func parseHunks(_ diff: String) -> [String: LineSet] {
        var ranges: [String: [ClosedRange<Int>]] = [:]
        var file: String?
        // A file's header lines come before its first hunk; within hunks, a removed line may read like one.
        var inHunks = false
        for line in diff.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("diff --git ") {
                file = nil
                inHunks = false
            } else if !inHunks, line.hasPrefix("--- a/") {
                file = String(line.dropFirst(6))
            } else if line.hasPrefix("@@ -"), let file {
                inHunks = true
                let old = line.dropFirst(4).prefix { $0 != " " }.split(separator: ",")
                guard let start = old.first.flatMap({ Int($0) }) else { continue }
                let count = old.count > 1 ? Int(old[1]) ?? 1 : 1
                let first = max(start, 1)
                ranges[file, default: []].append(count == 0 ? first...first : first...(first + count - 1))
            }
        }
        return ranges.mapValues { LineSet(ranges: $0) }
    }

    /// The paths a git command lists with `-z`, from the repository's root; what git cannot list is a
    /// ``UsageError`` (a selection from a partial list would leave out what it cannot see).
    private static func paths(_ arguments: [String], in root: String) async throws -> Set<String> {
        guard let list = await git(arguments, in: root, maximumBytes: 16 << 20) else {
            throw UsageError(
                .badValue,
                "git \(arguments.joined(separator: " ")) failed in \(root): without what changed, nothing can be left out"
            )
        }
        return Set(list.split(separator: "\0").map(String.init))
    }

    private static func git(_ arguments: [String], in directory: String, maximumBytes: Int = 64 * 1024) async -> String?
    {
        await HostFacts.output(of: ["git"] + arguments, in: directory, maximumBytes: maximumBytes)
    }

    private static func trimmed(_ text: String) -> String { text.trimmingCharacters(in: .whitespacesAndNewlines) }

    /// `path` with its symbolic links resolved (as git gives the repository's root); a path that does not exist (a
    /// deleted file) through its nearest folder that does.
    static func real(_ path: String) -> String {
        if let resolved = realpath(path, nil) {
            defer { free(resolved) }
            return String(cString: resolved)
        }
        let url = URL(fileURLWithPath: path)
        let parent = url.deletingLastPathComponent().path
        guard parent != path, !parent.isEmpty, parent != "/" else { return path }
        return real(parent) + "/" + url.lastPathComponent
    }

    /// `path` from `root` (both absolute, resolved); `nil` outside it.
    static func relative(_ path: String, to root: String) -> String? {
        let folder = root.hasSuffix("/") ? root : root + "/"
        guard path.hasPrefix(folder) else { return nil }
        return String(path.dropFirst(folder.count))
    }

    private static func flag(_ change: Change) -> String {
        switch change {
        case .since: "--changed-since"
        case .files: "--changed"
        }
    }
}
