import Foundation
import OrchestrateModel

/// coverage.py's JSON report with contexts (`coverage json --show-contexts`), as a test's process leaves it in its
/// artifacts folder: the source files each test ran. A test's context is named as pytest-cov names it
/// (`tests/test_cart.py::test_pay|run`) or as coverage.py's `dynamic_context = test_function` does
/// (`tests.test_cart.test_pay`, or `test_cart.test_pay` when its folder is no package).
package enum CoverageContexts {
    /// The report's name in the artifacts folder.
    package static let fileName = "coverage.json"
    /// The largest report read, and the most files and contexts taken from one.
    package static let largestReport = 64 << 20
    package static let largestCount = 20_000

    package struct Malformed: Error, CustomStringConvertible {
        package var description: String
    }

    /// By context (its phase after `|` dropped), the files each ran and their lines, as paths relative to `directory`
    /// (where the process ran); files outside it (installed packages) are left out, and so is a path that climbs out of
    /// it. The empty context holds what ran outside any test (modules' import-time code such as `def` lines,
    /// `conftest.py`, an `__init__.py`), which every test of the report ran before it, and every file the report
    /// measured (with no lines, when none ran outside a test). Throws ``Malformed`` when `data` is not such a report,
    /// or names more than ``largestCount`` files or contexts.
    package static func read(_ data: Data, directory: String) throws -> [String: [String: LineSet]] {
        guard let report = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let files = report["files"] as? [String: Any]
        else { throw Malformed(description: "not coverage.py's JSON report (no \"files\")") }
        let folder = directory.hasSuffix("/") ? directory : directory + "/"
        guard files.count <= largestCount else {
            throw Malformed(description: "more than \(largestCount) files: too many to take into footprints")
        }
        var ran: [String: [String: [Int]]] = [:]
        var everyTest: [String: [Int]] = [:]
        for (path, entry) in files {
            guard let relative = relative(path, to: folder) else { continue }
            everyTest[relative, default: []] += []
            guard let entry = entry as? [String: Any], let contexts = entry["contexts"] as? [String: Any] else {
                throw Malformed(description: "no contexts for \(path): write it with coverage json --show-contexts")
            }
            for (lineText, names) in contexts {
                guard let line = Int(lineText), line > 0, line <= LineSet.largest, let names = names as? [Any] else {
                    continue
                }
                for case let context as String in names {
                    let test = String(context.prefix { $0 != "|" })
                    guard test.utf8.count <= 4096 else { continue }
                    if test.isEmpty {
                        everyTest[relative, default: []].append(line)
                    } else {
                        ran[test, default: [:]][relative, default: []].append(line)
                    }
                }
            }
        }
        guard ran.count <= largestCount else {
            throw Malformed(description: "more than \(largestCount) contexts: too many to take into footprints")
        }
        ran[""] = everyTest
        return ran.mapValues { $0.mapValues { LineSet(lines: $0) } }
    }

    /// The contexts that may name test `id` (pytest's `tests/test_cart.py::TestCart::test_pay[1]`): the id itself, and
    /// its module's dotted path or name with its class and function, without parameters.
    package static func contexts(naming id: String) -> [String] {
        let parts = id.components(separatedBy: "::")
        guard parts.count > 1, parts[0].hasSuffix(".py") else { return [id] }
        let module = String(parts[0].dropLast(3))
        let qualified = parts.dropFirst().map { String($0.prefix { $0 != "[" }) }.joined(separator: ".")
        let dotted = module.split(separator: "/").joined(separator: ".")
        let name = module.split(separator: "/").last.map(String.init) ?? module
        return [id, "\(dotted).\(qualified)", "\(name).\(qualified)"]
    }

    /// `path` (relative to the folder, or absolute) relative to `folder`, when it is inside it.
    private static func relative(_ path: String, to folder: String) -> String? {
        let inside = path.hasPrefix("/") ? (path.hasPrefix(folder) ? String(path.dropFirst(folder.count)) : nil) : path
        guard let inside, !inside.isEmpty else { return nil }
        let components = inside.split(separator: "/")
        guard !components.contains(".."), !inside.contains("\0") else { return nil }
        return components.filter { $0 != "." }.joined(separator: "/")
    }
}
