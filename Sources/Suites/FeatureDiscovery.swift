import Foundation
import Gherkin
import OrchestrateModel

/// `suite.gherkin`: feature files found by glob patterns, compiled into pickles.
package enum FeatureDiscovery {
    /// A pickle as a scenario needs it.
    struct Found {
        /// Feature path, scenario name as written and the example row's cells: stable when scenarios, rows or
        /// files are reordered, so history follows the scenario.
        var stableID: String
        var name: String
        /// Without their `@`, as the config writes them.
        var tags: [String]
        var uri: String
        var line: Int
        var scenarioLine: Int
        /// The Cucumber Messages pickle as JSON, handed to the scenario as ORCHESTRATE_PICKLE (OrchestrateKit's
        /// runner executes it).
        var json: String

        init(_ pickle: Pickle) {
            var scenario = pickle.writtenName
            if !pickle.example.isEmpty { scenario += " [\(pickle.example.joined(separator: ", "))]" }
            stableID = FeatureDiscovery.id(uri: pickle.uri, name: scenario)
            name = pickle.name
            tags = pickle.tags.map { String($0.name.dropFirst()) }
            uri = pickle.uri
            line = pickle.location.line
            scenarioLine = pickle.scenarioLine
            json = String(decoding: (try? FeatureDiscovery.messagesEncoder.encode(pickle)) ?? Data(), as: UTF8.self)
        }
    }

    /// How Cucumber Messages are written: keys sorted, slashes as they are.
    package static var messagesEncoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// `<feature path>: <scenario>`: a pickle's id.
    static func id(uri: String, name: String) -> String { "\(uri): \(name)" }

    /// The scenario part of a pickle's id (what follows `<feature path>: `), nil for other scenarios.
    package static func name(inID id: String, uri: String?) -> String? {
        guard let uri, uri.hasSuffix(".feature") else { return nil }
        let prefix = Self.id(uri: uri, name: "")
        return id.hasPrefix(prefix) ? String(id.dropFirst(prefix.count)) : nil
    }

    /// The pickles of every file the patterns match, files in path order. A pattern that matches nothing and a
    /// file that does not parse are errors naming the config line or file:line:column.
    static func pickles(patterns: [String], in directory: String, config: String, line: Int) throws -> [Found] {
        var files: [String] = []
        var seen = Set<String>()
        for pattern in patterns {
            let matched = self.files(matching: pattern, in: directory)
            if matched.isEmpty {
                throw ConfigError(
                    .noScenarios,
                    file: config, line: line, "suite.gherkin: \"\(pattern)\" matches no feature file under \(directory)"
                )
            }
            files += matched.filter { seen.insert($0).inserted }
        }
        var found: [Found] = []
        for file in files {
            let path = URL(fileURLWithPath: directory).appendingPathComponent(file).path
            guard let data = FileManager.default.contents(atPath: path),
                let source = String(data: data, encoding: .utf8)
            else {
                throw ConfigError(.unreadable, file: file, "cannot read this feature file as UTF-8")
            }
            let pickles: [Pickle]
            do {
                pickles = try GherkinParser.parse(source).pickles(uri: file)
            } catch {
                // One error per file is what a config error carries; `orchestrate gherkin pickles` lists them all.
                let first = error.errors[0]
                let more =
                    error.errors.count > 1
                    ? " (and \(error.errors.count - 1) more: orchestrate gherkin pickles \(file))" : ""
                throw ConfigError(
                    .invalid,
                    file: file, line: first.location.line, column: first.location.column ?? 0, first.message + more)
            }
            for pickle in pickles.map(Found.init) {
                for text in [pickle.stableID, pickle.name] {
                    try TestListing.check(
                        text, file: file, line: pickle.line, from: "this scenario's name (with its file's path) makes")
                }
                found.append(pickle)
            }
        }
        return found
    }

    /// `id`, or `id (2)`, `id (3)`… when it is taken (two scenarios of one file with the same name).
    static func uniqueID(_ id: String, seen: inout Set<String>) -> String {
        var candidate = id
        var number = 2
        while seen.contains(candidate) {
            candidate = "\(id) (\(number))"
            number += 1
        }
        seen.insert(candidate)
        return candidate
    }

    /// Paths relative to `directory` matching a glob: `*` and `?` within a path component, `**` for any number
    /// of folders. Sorted; hidden folders are skipped unless named.
    static func files(matching pattern: String, in directory: String) -> [String] {
        let parts = pattern.split(separator: "/").map(String.init).filter { $0 != "." }
        var results: [String] = []
        func walk(_ relative: String, _ remaining: ArraySlice<String>) {
            guard let part = remaining.first else {
                var isDirectory: ObjCBool = false
                let path = URL(fileURLWithPath: directory).appendingPathComponent(relative).path
                if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue {
                    results.append(relative)
                }
                return
            }
            let folder =
                relative.isEmpty ? directory : URL(fileURLWithPath: directory).appendingPathComponent(relative).path
            let entries = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
            func join(_ name: String) -> String { relative.isEmpty ? name : relative + "/" + name }
            if part == "**" {
                walk(relative, remaining.dropFirst())
                for entry in entries where !entry.hasPrefix(".") {
                    var isDirectory: ObjCBool = false
                    if FileManager.default.fileExists(atPath: folder + "/" + entry, isDirectory: &isDirectory),
                        isDirectory.boolValue
                    {
                        walk(join(entry), remaining)
                    }
                }
            } else if !part.contains("*") && !part.contains("?") {
                if FileManager.default.fileExists(atPath: folder + "/" + part) {
                    walk(join(part), remaining.dropFirst())
                }
            } else {
                for entry in entries
                where (!entry.hasPrefix(".") || part.hasPrefix("."))
                    && PathGlob.component(Array(entry), matches: Array(part))
                {
                    walk(join(entry), remaining.dropFirst())
                }
            }
        }
        walk(pattern.hasPrefix("/") ? "/" : "", parts[...])
        return Set(results).sorted()
    }
}
