import Foundation
import Logging
import OrchestrateModel

/// `orchestrate init`: looks at a folder for a suite (a Swift package, an Xcode project, pytest, feature files, jest),
/// writes a commented orchestrate.yml for it — never over one that is there —, adds `.orchestrate/` to .gitignore, and
/// says what would run and what to do next.
package enum InitCommand {
    /// The kinds of suite init knows, in the order it prefers them when it finds several.
    package enum Kind: String, CaseIterable, Sendable {
        case xcodebuild, swiftpm, pytest, gherkin, jest
    }

    /// A suite found in the folder: its kind, what showed it, and the config for it.
    package struct Finding: Sendable, Equatable {
        package var kind: Kind
        /// The file or folder that showed it, relative to the folder.
        package var evidence: String
        package var config: String
        /// What the config still needs by hand before it runs; nil when it runs as written.
        package var todo: String?
    }

    /// Folders a search for test files never enters: tools' and dependencies' own.
    static let skipped: Set<String> = [
        ".git", ".build", ".orchestrate", ".swiftpm", "node_modules", ".venv", "venv", "env", "__pycache__",
        ".tox", ".nox", "DerivedData", "Pods", "Carthage", "build", "dist", ".eggs", ".mypy_cache", ".pytest_cache",
    ]

    /// The suites in `directory`, in ``Kind`` order.
    package static func detect(in directory: String) -> [Finding] {
        let files = Files(directory)
        var findings: [Finding] = []
        if let project = files.top.first(where: { $0.hasSuffix(".xcworkspace") })
            ?? files.top.first(where: {
                $0.hasSuffix(".xcodeproj")
            })
        {
            findings.append(xcode(project))
        }
        if files.top.contains("Package.swift") { findings.append(swiftpm()) }
        if let evidence = files.pytestEvidence() { findings.append(pytest(evidence)) }
        if !files.features.isEmpty { findings.append(gherkin(files)) }
        if let evidence = files.jestEvidence() { findings.append(jest(evidence)) }
        return findings
    }

    /// Writes the config of the suite found in `directory` (`kind`, else the one chosen among several: asked on a
    /// terminal, else the first), adds `.orchestrate/` to `.gitignore`, and returns what to print.
    package static func run(
        directory: String, configName: String, kind: Kind?, console: Console, logger: Logger
    ) async throws -> String {
        let findings = detect(in: directory)
        guard !findings.isEmpty else {
            throw UsageError(
                .notFound,
                "found no suite in \(directory): no Package.swift, .xcodeproj or .xcworkspace, pytest config or test_*.py, "
                    + ".feature files, or package.json with jest; run orchestrate init in the suite's folder, or write "
                    + "orchestrate.yml by hand (docs/configuration.md)")
        }
        let finding: Finding
        var lines: [String] = []
        if let kind {
            guard let found = findings.first(where: { $0.kind == kind }) else {
                throw UsageError(
                    .notFound,
                    "--suite \(kind.rawValue): none here (found \(describe(findings)))")
            }
            finding = found
        } else if findings.count > 1, let picked = ask(findings, console: console) {
            finding = picked
        } else {
            finding = findings[0]
            if findings.count > 1 {
                lines.append(
                    "found several suites (\(describe(findings))): wrote \(finding.kind.rawValue)'s; orchestrate init "
                        + "--suite KIND --config NAME.yml writes another")
            }
        }
        let configPath = URL(fileURLWithPath: configName, relativeTo: URL(fileURLWithPath: directory + "/")).path
        do {
            try AtomicFile.write(finding.config, to: configPath, replacing: false)
        } catch let error as CocoaError where error.code == .fileWriteFileExists {
            throw UsageError(
                .cannotWrite,
                "\(configName) is there already: orchestrate init never overwrites it (orchestrate scenarios shows what "
                    + "it runs; --config NAME.yml writes another)")
        } catch {
            throw UsageError(.cannotWrite, "cannot write \(configName): \(error.localizedDescription)")
        }
        lines.append("wrote \(configName): a \(finding.kind.rawValue) suite (found \(finding.evidence))")
        if let said = ignoreOwnFiles(in: directory) { lines.append(said) }
        if let todo = finding.todo {
            lines.append("before it runs: \(todo)")
            lines.append("then: orchestrate scenarios (what would run), orchestrate run")
            return lines.joined(separator: "\n")
        }
        console.line(lines.joined(separator: "\n"))
        if finding.kind == .swiftpm { console.note("listing the tests (this builds the package's tests first)") }
        lines = ["what would run (orchestrate scenarios):"]
        do {
            // Without history yet: no note that expected durations are unknown.
            let table = try await ListingCommands.scenarios(
                configPath: configPath, only: [], tags: nil, database: nil, format: .table,
                console: Console { _, _ in },
                logger: logger)
            let rows = table.split(separator: "\n", omittingEmptySubsequences: false)
            lines += rows.prefix(21).map(String.init)
            if rows.count > 21 { lines.append("… and \(rows.count - 21) more") }
        } catch {
            console.note(
                "\(configName) is written, but listing what it runs failed; once that is fixed: orchestrate run")
            throw error
        }
        lines.append("next: orchestrate run")
        return lines.joined(separator: "\n")
    }

    /// Whether the folder's .gitignore names `.orchestrate/`.
    static func ignoresOwnFiles(in directory: String) -> Bool {
        guard let data = FileManager.default.contents(atPath: "\(directory)/.gitignore") else { return false }
        return String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).contains {
            [".orchestrate", ".orchestrate/", "/.orchestrate", "/.orchestrate/"].contains(
                $0.trimmingCharacters(in: .whitespaces))
        }
    }

    /// Adds `.orchestrate/` to the folder's .gitignore: appended to the one there (through a link, to the file git
    /// reads), or a new one. What to say of it; nil when it is ignored already.
    static func ignoreOwnFiles(in directory: String) -> String? {
        if ignoresOwnFiles(in: directory) { return nil }
        let path = "\(directory)/.gitignore"
        let addition = "# orchestrate's database, reports and kept files\n.orchestrate/\n"
        var status = stat()
        guard lstat(path, &status) == 0 else {
            do {
                try AtomicFile.write(addition, to: path, replacing: false)
                return "added .orchestrate/ to .gitignore"
            } catch {
                return "could not make .gitignore (\(error.localizedDescription)): add .orchestrate/ to it by hand"
            }
        }
        // Appended whole, in one write, after a line break when the file does not end with one; never rewritten.
        guard let existing = FileManager.default.contents(atPath: path) else {
            return "could not read .gitignore: add .orchestrate/ to it by hand"
        }
        do {
            try AtomicFile.append(
                (existing.isEmpty || existing.last == 0x0A ? "" : "\n") + addition, to: path, creating: false)
        } catch {
            return "could not write .gitignore (\(error.localizedDescription)): add .orchestrate/ to it by hand"
        }
        return "added .orchestrate/ to .gitignore"
    }

    /// The suite to write, asked on a terminal (nil elsewhere, or when the answer is not one of them).
    static func ask(_ findings: [Finding], console: Console) -> Finding? {
        guard isatty(STDIN_FILENO) == 1, isatty(STDERR_FILENO) == 1 else { return nil }
        console.note("found several suites here:")
        for (index, finding) in findings.enumerated() {
            console.note("  \(index + 1)) \(finding.kind.rawValue) (\(finding.evidence))")
        }
        console.note("which one should orchestrate.yml run? [1] ")
        guard let answer = readLine(strippingNewline: true)?.trimmingCharacters(in: .whitespaces) else { return nil }
        if answer.isEmpty { return findings[0] }
        if let number = Int(answer), findings.indices.contains(number - 1) { return findings[number - 1] }
        return findings.first { $0.kind.rawValue == answer.lowercased() }
    }

    static func describe(_ findings: [Finding]) -> String {
        findings.map { "\($0.kind.rawValue): \($0.evidence)" }.joined(separator: ", ")
    }
}

extension InitCommand {
    /// What a folder holds, looked at once: its own entries, and the feature and Python test files below it (at most
    /// four folders deep, at most 20,000 entries looked at).
    struct Files {
        let directory: String
        var top: [String] = []
        var features: [String] = []
        var pythonTests: [String] = []
        var behaveSteps = false

        init(_ directory: String) {
            self.directory = directory
            let manager = FileManager.default
            top = ((try? manager.contentsOfDirectory(atPath: directory)) ?? []).sorted()
            guard let walk = manager.enumerator(atPath: directory) else { return }
            var seen = 0
            while let path = walk.nextObject() as? String, seen < 20_000 {
                seen += 1
                let name = (path as NSString).lastPathComponent
                let depth = path.split(separator: "/").count
                let isFolder = (walk.fileAttributes?[.type] as? FileAttributeType) == .typeDirectory
                if isFolder {
                    if InitCommand.skipped.contains(name) || depth >= 4 { walk.skipDescendants() }
                    if name == "steps", (path as NSString).deletingLastPathComponent.hasSuffix("features") {
                        behaveSteps = true
                    }
                    continue
                }
                if name.hasSuffix(".feature") { features.append(path) }
                if name.hasSuffix(".py"), name.hasPrefix("test_") || name.hasSuffix("_test.py") {
                    pythonTests.append(path)
                }
            }
            features.sort()
            pythonTests.sort()
        }

        func text(_ name: String) -> String? {
            guard top.contains(name) else { return nil }
            return try? String(contentsOfFile: "\(directory)/\(name)", encoding: .utf8)
        }

        /// What says this is a pytest suite: its config, a conftest, or test files.
        func pytestEvidence() -> String? {
            if top.contains("pytest.ini") { return "pytest.ini" }
            if text("pyproject.toml")?.contains("[tool.pytest") == true { return "pyproject.toml's [tool.pytest…]" }
            if text("setup.cfg")?.contains("[tool:pytest]") == true { return "setup.cfg's [tool:pytest]" }
            if text("tox.ini")?.contains("[pytest]") == true { return "tox.ini's [pytest]" }
            if top.contains("conftest.py") { return "conftest.py" }
            return pythonTests.first
        }

        /// What says this is a jest suite: package.json naming jest.
        func jestEvidence() -> String? {
            guard let package = text("package.json"),
                let json = try? JSONSerialization.jsonObject(with: Data(package.utf8)) as? [String: Any]
            else { return nil }
            for key in ["devDependencies", "dependencies"] where (json[key] as? [String: Any])?["jest"] != nil {
                return "package.json's \(key).jest"
            }
            if ((json["scripts"] as? [String: Any])?["test"] as? String)?.contains("jest") == true {
                return "package.json's scripts.test"
            }
            return nil
        }
    }
}

extension InitCommand {
    /// The lines every written config starts with, and a blank line.
    static let header = """
        # Written by orchestrate init. Every test is a scenario of its own: sharded over worker slots (longest expected
        # first, from history), retried, with its own result, history, flakiness score and quarantine.
        # Reference: orchestrate's docs/configuration.md and docs/suites.md.

        retries: 1             # a failed test runs again once; passing then, it is reported flaky, not failed
        # workers: 8           # worker slots on this host (default: its processor cores)
        """ + "\n\n"

    /// The lines every written config ends with, after a blank line.
    static let liveMock =
        "\n\n" + """
            # The tests reach their backends as they are. To record their HTTP traffic and replay it, see docs/mock-server.md.
            mock: { mode: live }
            """ + "\n"

    static func swiftpm() -> Finding {
        Finding(
            kind: .swiftpm, evidence: "Package.swift",
            config: header + """
                suite:
                  # The package's tests (XCTest and Swift Testing): built once, listed from the test binary, run in batches
                  # sized from what its start-up costs.
                  swiftpm:
                    package: .
                    # filter: MyTests  # only the tests whose id matches, as swift test --filter
                """ + liveMock)
    }

    static func xcode(_ project: String) -> Finding {
        let name = (project as NSString).deletingPathExtension
        let key = project.hasSuffix(".xcworkspace") ? "workspace" : "project"
        return Finding(
            kind: .xcodebuild, evidence: project,
            config: header + """
                suite:
                  # The scheme's tests: built once (build-for-testing), listed, run in -only-testing batches; each slot has
                  # its own simulator, cloned from device and deleted at the end.
                  xcodebuild:
                    \(key): \(yaml(project))
                    scheme: \(yaml(name))        # xcodebuild -list names the schemes
                    device: iPhone 16
                  batch: { size: 10, seconds: 120 }
                  timeout: 10m
                """ + liveMock,
            todo: "check scheme and device in orchestrate.yml (xcodebuild -list names the schemes, xcrun simctl list "
                + "devicetypes the devices)")
    }

    /// A name from the folder as a YAML string: JSON's quoting, which YAML reads as it is.
    static func yaml(_ text: String) -> String {
        (try? JSONEncoder().encode(text)).flatMap { String(data: $0, encoding: .utf8) } ?? "\"\""
    }

    static func pytest(_ evidence: String) -> Finding {
        Finding(
            kind: .pytest, evidence: evidence,
            config: header + """
                suite:
                  # pytest lists the tests; they run in batches ({ids}), and the JUnit XML each batch writes gives every test
                  # its own result, time and failure.
                  list: "python3 -m pytest --collect-only -q -p no:cacheprovider | grep ::"
                  command: "python3 -m pytest -q -p no:cacheprovider -o junit_family=xunit2 --junitxml=$ORCHESTRATE_ARTIFACTS_DIR/junit.xml {ids}"
                  results: junit
                  env: { PYTHONDONTWRITEBYTECODE: "1" }
                """ + liveMock)
    }

    static func gherkin(_ files: Files) -> Finding {
        let pattern = files.features.allSatisfy { $0.hasPrefix("features/") } ? "features/**/*.feature" : "**/*.feature"
        let runner: (command: String, name: String)? =
            if files.behaveSteps || files.top.contains("behave.ini") || files.top.contains(".behaverc") {
                ("python3 -m behave --no-capture {uri}:{line}", "behave")
            } else if files.text("package.json")?.contains("@cucumber/cucumber") == true {
                ("npx cucumber-js {uri}:{line}", "cucumber-js")
            } else if files.text("Gemfile")?.contains("cucumber") == true {
                ("bundle exec cucumber {uri}:{line}", "Cucumber")
            } else {
                nil
            }
        let command =
            runner.map { "  command: \"\($0.command)\"   # \($0.name), one scenario per process" }
                ?? """
                  # command: "…"   # the program that runs one scenario: its feature file and line are {uri} and {line},
                  #                 # the whole pickle is in $ORCHESTRATE_PICKLE (OrchestrateKit's runner reads it)
                """
        return Finding(
            kind: .gherkin, evidence: files.features[0],
            config: header + """
                suite:
                  # Every scenario of the feature files (every example row of an outline) is a scenario of its own.
                  gherkin: ["\(pattern)"]
                \(command)
                """ + liveMock,
            todo: runner == nil
                ? "set suite.command in orchestrate.yml to the program that runs one scenario ({uri}:{line}, or the "
                    + "pickle in $ORCHESTRATE_PICKLE)" : nil)
    }

    static func jest(_ evidence: String) -> Finding {
        Finding(
            kind: .jest, evidence: evidence,
            config: header + """
                suite:
                  # jest lists its test files; each file is a scenario, run in a jest process of its own.
                  list: 'npx jest --listTests | sed "s|^$PWD/||"'
                  command: "npx jest --ci {id}"
                  timeout: 5m
                """ + liveMock)
    }
}
