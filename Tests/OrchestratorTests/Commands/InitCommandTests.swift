import Foundation
import OrchestrateTesting
import Orchestrator
import Suites
import Testing

/// What `orchestrate init` finds in a folder, and the config it writes for each kind, read back by the config loader.
@Suite("orchestrate init: what a folder holds")
struct InitCommandTests {
    static func found(_ files: [String: String]) async throws -> [InitCommand.Finding] {
        try await TemporaryDirectory.with { directory in
            for (path, text) in files { try directory.write(path, text) }
            return InitCommand.detect(in: directory.path)
        }
    }

    @Test(
        "each kind of suite is told by its files",
        arguments: [
            (["Package.swift": "// swift-tools-version:6.0"], InitCommand.Kind.swiftpm, "Package.swift"),
            (["App.xcodeproj/project.pbxproj": ""], .xcodebuild, "App.xcodeproj"),
            (
                ["App.xcodeproj/project.pbxproj": "", "App.xcworkspace/contents.xcworkspacedata": ""], .xcodebuild,
                "App.xcworkspace"
            ),
            (["pytest.ini": "[pytest]\n"], .pytest, "pytest.ini"),
            (["pyproject.toml": "[tool.pytest.ini_options]\n"], .pytest, "pyproject.toml's [tool.pytest…]"),
            (["setup.cfg": "[tool:pytest]\n"], .pytest, "setup.cfg's [tool:pytest]"),
            (["tox.ini": "[pytest]\n"], .pytest, "tox.ini's [pytest]"),
            (["conftest.py": ""], .pytest, "conftest.py"),
            (["src/pkg/tests/test_api.py": "def test_a(): pass\n"], .pytest, "src/pkg/tests/test_api.py"),
            (["spec/cart.feature": "Feature: c\n"], .gherkin, "spec/cart.feature"),
            (["package.json": #"{"devDependencies": {"jest": "^29"}}"#], .jest, "package.json's devDependencies.jest"),
            (["package.json": #"{"scripts": {"test": "jest --ci"}}"#], .jest, "package.json's scripts.test"),
        ] as [([String: String], InitCommand.Kind, String)])
    func kinds(files: [String: String], kind: InitCommand.Kind, evidence: String) async throws {
        let findings = try await Self.found(files)
        #expect(findings.map(\.kind) == [kind])
        #expect(findings.first?.evidence == evidence)
    }

    @Test("tools' and dependencies' folders are not looked in, and an empty folder holds no suite")
    func skipped() async throws {
        #expect(
            try await Self.found([
                "node_modules/lib/test_x.py": "", ".venv/lib/test_y.py": "", ".build/checkouts/a.feature": "",
                "README.md": "",
                "package.json": #"{"dependencies": {"left-pad": "1"}}"#,
            ]).isEmpty)
    }

    @Test("several suites come in a fixed order: Xcode, Swift package, pytest, Gherkin, jest")
    func order() async throws {
        let findings = try await Self.found([
            "package.json": #"{"devDependencies": {"jest": "1"}}"#, "features/a.feature": "Feature: a\n",
            "conftest.py": "", "Package.swift": "", "App.xcodeproj/project.pbxproj": "",
        ])
        #expect(findings.map(\.kind) == [.xcodebuild, .swiftpm, .pytest, .gherkin, .jest])
    }

    @Test(
        "feature files are run by the runner whose files are there; with none, the config says what to set",
        arguments: [
            (["features/steps/cart.py": ""], "python3 -m behave --no-capture {uri}:{line}"),
            (["behave.ini": ""], "python3 -m behave --no-capture {uri}:{line}"),
            (["package.json": #"{"devDependencies": {"@cucumber/cucumber": "10"}}"#], "npx cucumber-js {uri}:{line}"),
            (["Gemfile": "gem 'cucumber'\n"], "bundle exec cucumber {uri}:{line}"),
        ])
    func gherkinRunners(files: [String: String], command: String) async throws {
        let gherkin = try #require(
            try await Self.found(files.merging(["features/cart.feature": "Feature: c\n"]) { $1 }).first {
                $0.kind == .gherkin
            })
        #expect(gherkin.config.contains("command: \"\(command)\""), "\(gherkin.config)")
        #expect(gherkin.config.contains(#"gherkin: ["features/**/*.feature"]"#))
        #expect(gherkin.todo == nil)
        let unknown = try #require(try await Self.found(["specs/a/cart.feature": "Feature: c\n"]).first)
        #expect(unknown.config.contains(#"gherkin: ["**/*.feature"]"#) && unknown.config.contains("# command:"))
        #expect(unknown.todo?.contains("suite.command") == true)
    }

    @Test("every config init writes is one the config loader reads, with the suite it was written for")
    func configsLoad() async throws {
        try await TemporaryDirectory.with { directory in
            let files = [
                "Package.swift": "", "App.xcworkspace/contents.xcworkspacedata": "", "conftest.py": "",
                "features/a.feature": "Feature: a\n", "features/steps/a.py": "",
                "package.json": #"{"devDependencies": {"jest": "1"}}"#,
            ]
            for (path, text) in files { try directory.write(path, text) }
            let findings = InitCommand.detect(in: directory.path)
            #expect(findings.count == 5)
            for finding in findings {
                try directory.write("\(finding.kind.rawValue).yml", finding.config)
                let config = try ConfigLoader.load(path: directory.file("\(finding.kind.rawValue).yml"))
                #expect(config.retries == 1, "\(finding.kind)")
                switch finding.kind {
                case .swiftpm: #expect(config.suite.swiftpm?.package == ".")
                case .xcodebuild: #expect(config.suite.xcodebuild?.workspace == "App.xcworkspace")
                case .pytest, .jest: #expect(config.suite.list != nil && config.suite.command != nil)
                case .gherkin: #expect(config.suite.gherkin == ["features/**/*.feature"])
                }
            }
        }
    }
}
