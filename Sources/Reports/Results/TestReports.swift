import Foundation
import OrchestrateModel

/// The per-test results an attempt's runner reported (``Scenario/results``), read from the attempt's artifacts folder
/// and output, and matched to the ids of the tests the attempt ran.
package enum TestReports {
    /// Every result of `format` in `folder` (its top level, in name order): for ``ResultsFormat/swiftpm``, Swift
    /// Testing event streams (`*.jsonl`) and XCTest's output (`*.xctest.log`). Only the folder's own regular files are
    /// read (``FolderHandle/contents(of:maximumBytes:)``: no link, FIFO or hard link of a file elsewhere, nothing past
    /// ``JUnitResults/maximumBytes``), and the folder itself is not reached through a link. A file that cannot be read
    /// is an error naming it.
    package static func read(_ format: ResultsFormat, folder path: String) throws -> [RunnerTestResult] {
        let folder: FolderHandle
        do {
            folder = try FolderHandle(opening: path)
        } catch {
            throw RunnerResultsError(
                .refused,
                "ORCHESTRATE_ARTIFACTS_DIR is not the folder orchestrate made: \(error)")
        }
        var results: [RunnerTestResult] = []
        for name in try folder.names().sorted() where format.suffixes.contains(where: name.hasSuffix) {
            // Xcode's result bundle is a folder: what is read is the JSON that xcresulttool made of it. A folder is no
            // report.
            if format == .xcresult && !name.hasSuffix(".xcresult.json") || folder.kind(of: name) == .folder { continue }
            let data: Data
            do {
                data = try folder.contents(of: name, maximumBytes: JUnitResults.maximumBytes)
            } catch {
                throw RunnerResultsError(.refused, error.description)
            }
            switch format {
            case .junit: results += try JUnitResults.parse(data, file: name)
            case .cucumberJSON: results += try CucumberJSONReport(data, file: name).results
            case .cucumberMessages: results += CucumberMessagesReport(data).results
            case .swiftpm:
                results +=
                    name.hasSuffix(".jsonl")
                    ? SwiftPMResults.swiftTestingEvents(data)
                    : SwiftPMResults.xctestOutput(String(decoding: data, as: UTF8.self))
            case .xcresult: results += try XcodeResults.tests(data, file: name)
            }
        }
        return results
    }

    /// Removes the results files of `format` from `folder` (links among them as links).
    package static func remove(_ format: ResultsFormat, in path: String) {
        guard let folder = try? FolderHandle(opening: path) else { return }
        for name in (try? folder.names()) ?? [] where format.suffixes.contains(where: name.hasSuffix) {
            try? folder.remove(name)
        }
    }

    /// Which result is whose: each id of `tests` (with the scenario's `uri:line`, for Cucumber scenarios) gets the last
    /// result that names it — but never a pass over a failure (a test run twice, in two configurations, failed if
    /// either run did) — exactly (`classname/name`, `classname.name`), by a trailing part of its path (XCTest's
    /// `Class/test` for `Module.Class/test`, pytest's `tests.test_shop.TestCart`/`test_add` for
    /// `tests/test_shop.py::TestCart::test_add`), or by its `uri:line`. A result two ids could claim goes to neither. A
    /// result that names none of them is nobody's: a test without a result of its own has none.
    package static func match(
        _ tests: [(id: String, location: String?)], _ results: [RunnerTestResult]
    ) -> [String: RunnerTestResult] {
        var matched: [String: RunnerTestResult] = [:]
        func keep(_ result: RunnerTestResult, for id: String) {
            if matched[id]?.status != .failed { matched[id] = result }
        }
        // `test()` and `test` are one test: Xcode's results name an XCTest method with its parentheses, its listing
        // without.
        func plain(_ id: String) -> String { id.hasSuffix("()") ? String(id.dropLast(2)) : id }
        let exact = Dictionary(tests.map { (plain($0.id), $0.id) }, uniquingKeysWith: { first, _ in first })
        let byLocation = Dictionary(
            tests.compactMap { test in test.location.map { ($0, test.id) } }, uniquingKeysWith: { first, _ in first })
        // Only results no id names exactly are matched by their parts.
        lazy var tokens = tests.map { (id: $0.id, tokens: Self.tokens($0.id)) }
        for result in results {
            if let id = exact[plain(result.id)] ?? exact[plain("\(result.classname).\(result.name)")]
                ?? (result.classname.isEmpty ? nil : exact[plain(result.name)])
            {
                keep(result, for: id)
                continue
            }
            if let location = result.location, result.classname.hasSuffix(".feature") || result.name.isEmpty,
                let id = byLocation[location]
                    ?? byLocation.first(where: { location.hasSuffix("/" + $0.key) || $0.key.hasSuffix("/" + location) }
                    )?.value
            {
                keep(result, for: id)
                continue
            }
            let wanted = Self.tokens(result.classname) + [result.name]
            let candidates = tokens.filter {
                $0.tokens.count >= wanted.count && Array($0.tokens.suffix(wanted.count)) == wanted
            }
            if candidates.count == 1 { keep(result, for: candidates[0].id) }
        }
        return matched
    }

    /// The parts of a test id or class name: split at `/`, `.`, `::` and `#` outside brackets and parentheses, file
    /// extensions left out.
    static func tokens(_ text: String) -> [String] {
        var tokens: [String] = []
        var current = ""
        var depth = 0
        for character in text {
            switch character {
            case "[", "(": depth += 1
            case "]", ")": depth = max(depth - 1, 0)
            default: break
            }
            if depth == 0, "/.:#".contains(character) {
                if !current.isEmpty { tokens.append(current) }
                current = ""
            } else {
                current.append(character)
            }
        }
        if !current.isEmpty { tokens.append(current) }
        return tokens.filter { !extensions.contains($0) }
    }

    private static let extensions: Set<String> = [
        "py", "js", "mjs", "cjs", "ts", "tsx", "jsx", "swift", "rb", "java", "kt", "go", "feature",
    ]
}

/// What a SwiftPM test binary reports: XCTest on its output, Swift Testing as an event stream.
package enum SwiftPMResults {
    /// XCTest's lines (swift-corelibs-xctest): `Test Case 'Class.test' started at …`, `file:line: error: Class.test :
    /// message`, `Test Case 'Class.test' passed (0.001 seconds)` (or `failed`, `skipped`). Results are `Class/test`.
    package static func xctestOutput(_ output: String) -> [RunnerTestResult] {
        var results: [RunnerTestResult] = []
        var failures: [String: (message: String, location: String)] = [:]
        for line in output.split(whereSeparator: \.isNewline) {
            if line.hasPrefix("Test Case '"), let close = line.dropFirst(11).firstIndex(of: "'") {
                let name = line[line.index(line.startIndex, offsetBy: 11)..<close]
                let rest = line[line.index(after: close)...].trimmingCharacters(in: .whitespaces)
                let status: RunnerTestResult.Status
                if rest.hasPrefix("passed") {
                    status = .passed
                } else if rest.hasPrefix("failed") {
                    status = .failed
                } else if rest.hasPrefix("skipped") {
                    status = .skipped
                } else {
                    continue
                }
                let seconds = rest.split(separator: "(").last.flatMap { Double($0.split(separator: " ").first ?? "") }
                guard let dot = name.lastIndex(of: ".") else { continue }
                let test = String(name)
                results.append(
                    RunnerTestResult(
                        classname: String(name[..<dot]), name: String(name[name.index(after: dot)...]), status: status,
                        seconds: seconds,
                        message: failures[test]?.message, location: failures[test]?.location))
            } else if let range = line.range(of: ": error: ") {
                // `/path/File.swift:16: error: Class.test : XCTAssertEqual failed: …`
                let place = line[..<range.lowerBound]
                let rest = line[range.upperBound...]
                guard let separator = rest.range(of: " : ") else { continue }
                let test = String(rest[..<separator.lowerBound])
                if failures[test] == nil {
                    failures[test] = (
                        String(rest[separator.upperBound...]), JUnitResults.location(in: String(place)) ?? String(place)
                    )
                }
            }
        }
        return results
    }

    /// The Swift Testing event stream (JSON lines, `--event-stream-output-path`, version 0): a test function's result
    /// from its `testEnded` (failed when an issue was recorded in it, skipped by `testSkipped`), its time from the
    /// events' instants, a failure's message and `file:line` from the first issue. Results are the test's id without
    /// the source location Swift Testing appends (`Module.Suite/func()`).
    package static func swiftTestingEvents(_ data: Data) -> [RunnerTestResult] {
        var functions: [String: String] = [:]  // test id → name, for functions (not suites)
        var started: [String: Double] = [:]
        var issues: [String: (message: String, location: String?)] = [:]
        var results: [RunnerTestResult] = []
        for event in StreamEvent.read(data) {
            switch event {
            case .function(let id, let name):
                functions[id] = name
            case .started(let id, let instant) where functions[id] != nil:
                started[id] = instant
            case .issue(let id, let message, let location) where functions[id] != nil && issues[id] == nil:
                issues[id] = (message, location)
            case .ended(let id, let instant, let skipped) where functions[id] != nil:
                let plain = plainID(id)
                let (classname, name) = split(plain)
                let seconds = zip(started[id], instant).map { max($1 - $0, 0) }
                let status: RunnerTestResult.Status = skipped ? .skipped : issues[id] == nil ? .passed : .failed
                var result = RunnerTestResult(
                    classname: classname, name: name, status: status, seconds: seconds, message: issues[id]?.message,
                    location: issues[id]?.location)
                result.startedAt = started[id]
                results.append(result)
            default:
                break
            }
        }
        return results
    }

    /// What a line of the event stream says, as far as results go.
    package enum StreamEvent: Sendable, Equatable {
        case function(id: String, name: String)
        case started(id: String, instant: Double?)
        /// An issue that is not a known one.
        case issue(id: String, message: String, location: String?)
        case ended(id: String, instant: Double?, skipped: Bool)
        case other

        /// The stream's lines, each read on its own — JSON takes nearly all the time: a suite of a thousand tests writes
        /// a megabyte — in chunks side by side, in the stream's order; by the scanner of ``scanned(_:)`` where it reads
        /// them.
        static func read(_ data: Data) -> [StreamEvent] {
            data.lines().slicedSideBySide(minimumSlice: 500) { lines in
                lines.map { line in scanned(line) ?? StreamEvent(line: line) }
            }.flatMap { $0 }
        }

        /// The line read by JSONSerialization.
        package init(line: Data) {
            guard let record = (try? JSONSerialization.jsonObject(with: line)) as? [String: Any],
                let payload = record["payload"] as? [String: Any]
            else {
                self = .other
                return
            }
            if record["kind"] as? String == "test" {
                if payload["kind"] as? String == "function", let id = payload["id"] as? String {
                    self = .function(id: id, name: payload["name"] as? String ?? "")
                } else {
                    self = .other
                }
                return
            }
            guard let kind = payload["kind"] as? String, let id = payload["testID"] as? String else {
                self = .other
                return
            }
            let instant = ((payload["instant"] as? [String: Any])?["absolute"] as? NSNumber)?.doubleValue
            switch kind {
            case "testStarted":
                self = .started(id: id, instant: instant)
            case "issueRecorded":
                guard let issue = payload["issue"] as? [String: Any], issue["isKnown"] as? Bool != true else {
                    self = .other
                    return
                }
                let text = (payload["messages"] as? [[String: Any]] ?? []).compactMap { $0["text"] as? String }.joined(
                    separator: " — ")
                var location: String?
                if let source = issue["sourceLocation"] as? [String: Any],
                    let line = (source["line"] as? NSNumber)?.intValue
                {
                    let file = source["_filePath"] as? String ?? source["fileID"] as? String ?? ""
                    location = "\(file):\(line)"
                }
                self = .issue(id: id, message: text, location: location)
            case "testEnded", "testSkipped":
                self = .ended(id: id, instant: instant, skipped: kind == "testSkipped")
            default:
                self = .other
            }
        }
    }

    /// `Module.Suite/func()/File.swift:6:6` → `Module.Suite/func()`.
    static func plainID(_ id: String) -> String {
        guard let slash = id.lastIndex(of: "/") else { return id }
        let last = id[id.index(after: slash)...]
        let parts = last.split(separator: ":")
        guard parts.count >= 3, parts[0].hasSuffix(".swift"), parts.dropFirst().allSatisfy({ Int($0) != nil }) else {
            return id
        }
        return String(id[..<slash])
    }

    /// `Module.Suite/func()` → (`Module.Suite`, `func()`); `Module.func()` → (`Module`, `func()`).
    static func split(_ id: String) -> (String, String) {
        if let slash = id.lastIndex(of: "/") { return (String(id[..<slash]), String(id[id.index(after: slash)...])) }
        if let dot = id.firstIndex(of: ".") { return (String(id[..<dot]), String(id[id.index(after: dot)...])) }
        return ("", id)
    }
}

private func zip(_ first: Double?, _ second: Double?) -> (Double, Double)? {
    guard let first, let second else { return nil }
    return (first, second)
}
