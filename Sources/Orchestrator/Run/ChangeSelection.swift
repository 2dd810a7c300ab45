import Analysis
import Foundation
import Logging
import MockServer
import OrchestrateModel
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

    /// The most commits behind the base a footprint's revision may be.
    static let reachableCommits = 5000

    /// What a plan takes from the selection.
    struct Chosen {
        var scenarios: [Scenario]
        var description: String
        var skips: [RunReport.Skipped]
        var sampled: Set<String>
        /// Said before the run: what was chosen, and why when everything runs.
        var note: String
    }

    /// `scenarios` cut to those `change` can break, with the rest as skips. A revision git does not know, or a folder
    /// outside git, is a ``UsageError``.
    func choose(_ scenarios: [Scenario], change: Change) async throws -> Chosen {
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
            guard
                let resolved = await Self.git(
                    ["rev-parse", "--verify", "--quiet", "--end-of-options", "\(revision)^{commit}"], in: root
                ).map(Self.trimmed), !resolved.isEmpty
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
        let footprints = try await stored.compactMapValues { candidates in
            candidates.first { reachable.contains(Substring($0.revision)) }
        }
        let (known, failing) = try await history
        let times = try await expected
        guard !footprints.isEmpty else {
            return Chosen(
                scenarios: scenarios, description: label, skips: [], sampled: [],
                note:
                    "\(label): every test runs — no footprint at a revision \(base.map { String($0.prefix(10)) } ?? "HEAD") reaches "
                    + "(a run at a clean revision records them)")
        }
        // What changed since each footprint's revision (the same files for --changed).
        var changed: [String: Set<String>] = [:]
        let revisions = Set(footprints.values.map(\.revision))
        switch change {
        case .files(let files):
            let paths = Set(files.compactMap { Self.relative(Self.real($0), to: root) })
            for revision in revisions { changed[revision] = paths }
        case .since:
            let untracked = try await Self.paths(["ls-files", "-z", "--others", "--exclude-standard"], in: root)
            for revision in revisions {
                changed[revision] = try await Self.paths(
                    ["diff", "--name-only", "-z", "--no-renames", revision, "--"], in: root
                ).union(untracked)
            }
        }
        let owned = Self.ownPaths(settings: settings, root: root)
        let prefix = Self.relative(Self.real(directory), to: root) ?? ""
        let rules = Self.rules(settings.selectionRules, configPath: settings.configPath, prefix: prefix, root: root)
        let tests = scenarios.map { scenario in
            TestSelection.Test(
                id: scenario.id,
                footprint: footprints[scenario.id].map {
                    TestSelection.Footprint(revision: $0.revision, files: $0.files, endpoints: $0.endpoints)
                },
                known: known.contains(scenario.id), failedRecently: failing.contains(scenario.id),
                expectedMilliseconds: times[scenario.id], files: owned(scenario))
        }
        var generator = SystemRandomNumberGenerator()
        let decision = TestSelection(rules: rules).decide(
            tests, changed: changed, sample: settings.sample, using: &generator)
        var reasons: [String: Int] = [:]
        for (id, reason) in decision.selected {
            logger.info("selected", metadata: ["test": "\(id)", "reason": "\(reason)"])
            reasons[Self.kind(of: reason), default: 0] += 1
        }
        let planned = Dictionary(scenarios.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let sampled = Set(decision.selected.filter { $0.reason == .sampled }.map(\.id))
        let selected = Set(decision.selected.map(\.id))
        let files = changed.values.reduce(into: Set<String>()) { $0.formUnion($1) }.count
        let why = reasons.sorted { $0.value > $1.value || ($0.value == $1.value && $0.key < $1.key) }
            .map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        let saved = Double(decision.savedMilliseconds) / 1000
        return Chosen(
            scenarios: scenarios.filter { selected.contains($0.id) },
            description: "\(label), \(files) file\(files == 1 ? "" : "s")",
            skips: decision.skipped.map {
                RunReport.Skipped(
                    id: $0.id, name: planned[$0.id]?.name ?? $0.id, uri: planned[$0.id]?.uri,
                    runnerTest: planned[$0.id]?.isRunnerTest ?? false, reason: $0.reason,
                    expectedMilliseconds: $0.expectedMilliseconds)
            },
            sampled: sampled,
            note:
                "\(label): \(selected.count) of \(scenarios.count) tests run (\(why.isEmpty ? "none" : why)); "
                + "\(decision.skipped.count) left out, about \(String(format: "%.1f", saved)) s saved by history")
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
            let root = await git(["rev-parse", "--show-toplevel"], in: settings.directory).map(trimmed).map(real)
        else { return }
        let owned = ownPaths(settings: settings, root: root)
        var files: [String: [String]] = [:]
        for entry in report.scenarios where entry.result != .pending {
            files[entry.scenario.id] = owned(entry.scenario)
        }
        try await runs.saveFootprints(report.runID, project: settings.project, revision: revision, files: files)
    }

    /// A test's own files (``ownFiles(of:directory:configPath:cassette:)``) from the repository's `root`.
    static func ownPaths(settings: RunSettings, root: String) -> (Scenario) -> [String] {
        let directory = real(settings.directory)
        let configPath = real(settings.configPath)
        let cassette = MockSessions.cassettes(in: settings.recordings)
        return { scenario in
            ownFiles(of: scenario, directory: directory, configPath: configPath, cassette: real(cassette(scenario)))
                .compactMap { relative($0, to: root) }
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

    /// `path` with its symbolic links resolved (as git gives the repository's root), or as given when it does not exist.
    static func real(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
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
