import Foundation

/// coverage.py's JSON report with contexts (`coverage json --show-contexts`), as a test's process leaves it in its
/// artifacts folder: the source files each test ran. A test's context is named as pytest-cov names it
/// (`tests/test_cart.py::test_pay|run`) or as coverage.py's `dynamic_context = test_function` does
/// (`tests.test_cart.test_pay`, or `test_cart.test_pay` when its folder is no package).
package enum CoverageContexts {
    /// The report's name in the artifacts folder.
    package static let fileName = "coverage.json"
    /// The largest report read.
    package static let largestReport = 64 << 20

    package struct Malformed: Error, CustomStringConvertible {
        package var description: String
    }

    /// By context (its phase after `|` dropped), the files each ran, as paths relative to `directory` (where the process
    /// ran); files outside it (installed packages) are left out, and so is a path that climbs out of it. What ran
    /// outside any test (the empty context: modules' import-time code, `conftest.py`, an `__init__.py`) is counted for
    /// every test of the report: each of them ran after it, in the same process. Throws ``Malformed`` when `data` is not
    /// such a report.
    package static func read(_ data: Data, directory: String) throws -> [String: Set<String>] {
        guard let report = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let files = report["files"] as? [String: Any]
        else { throw Malformed(description: "not coverage.py's JSON report (no \"files\")") }
        let folder = directory.hasSuffix("/") ? directory : directory + "/"
        var ran: [String: Set<String>] = [:]
        var everyTest = Set<String>()
        for (path, entry) in files {
            guard let relative = relative(path, to: folder) else { continue }
            guard let entry = entry as? [String: Any], let contexts = entry["contexts"] as? [String: Any] else {
                throw Malformed(description: "no contexts for \(path): write it with coverage json --show-contexts")
            }
            var named = Set<String>()
            for case let lines as [Any] in contexts.values {
                for case let context as String in lines { named.insert(context) }
            }
            for context in named {
                let test = String(context.prefix { $0 != "|" })
                guard test.utf8.count <= 4096 else { continue }
                if test.isEmpty {
                    everyTest.insert(relative)
                } else {
                    ran[test, default: []].insert(relative)
                }
            }
        }
        for test in ran.keys { ran[test]!.formUnion(everyTest) }
        return ran
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
