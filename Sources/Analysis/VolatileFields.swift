import OrchestrateModel

/// Fields that change by themselves (ids, timestamps, tokens), learned from passing live attempts against their
/// recording: a JSON path of a request or response body whose value differed from the recording in at least
/// ``minimumChanges`` passing live attempts, with at least two different values among them (a field that changed once
/// and stays changed is the backend's change, not noise), is proposed for `mock.ignore.json`, so that replay matching
/// (request bodies) and drift evidence (response bodies) stop tripping on it. Array positions are made `[*]`: `$.items[3].at` and
/// `$.items[0].at` are one field.
package struct VolatileFields: Sendable {
    package var minimumChanges = 2

    package init(minimumChanges: Int = 2) {
        self.minimumChanges = minimumChanges
    }

    /// A passing live attempt of a test, with its recording.
    package struct Sample: Sendable {
        package var scenarioID: String
        package var recorded: [Exchange]
        package var live: [Exchange]

        package init(scenarioID: String, recorded: [Exchange], live: [Exchange]) {
            self.scenarioID = scenarioID
            self.recorded = recorded
            self.live = live
        }
    }

    /// A field to ignore: its path, which bodies it changed in, in how many of the passing live attempts of the tests
    /// where it changed, and those tests.
    package struct Suggestion: Sendable, Equatable, Encodable {
        package var path: String
        /// `request`, `response`, or both.
        package var bodies: [String]
        package var changed: Int
        package var attempts: Int
        package var tests: [String]
    }

    /// The fields that changed in at least ``minimumChanges`` samples, those that changed most often first; `ignored`
    /// says which paths are ignored already (left out).
    package func suggestions(_ samples: [Sample], ignored: (String) -> Bool = { _ in false }) -> [Suggestion] {
        // Per general path: the bodies, attempts and tests it changed in, and each concrete field's live values.
        var changed: [String: (bodies: Set<String>, attempts: Int, tests: Set<String>, values: [String: Set<String>])] =
            [:]
        var attemptsPerTest: [String: Int] = [:]
        for sample in samples {
            attemptsPerTest[sample.scenarioID, default: 0] += 1
            let changes = NetworkDiff.bodyChanges(recorded: sample.recorded, live: sample.live)
            var seen: [String: (bodies: Set<String>, values: [String: String])] = [:]
            for (body, paths) in [("request", changes.request), ("response", changes.response)] {
                for (path, value) in paths where !ignored(path) {
                    seen[Self.general(path), default: ([], [:])].bodies.insert(body)
                    seen[Self.general(path), default: ([], [:])].values["\(body) \(path)"] = value
                }
            }
            for (path, this) in seen {
                changed[path, default: ([], 0, [], [:])].bodies.formUnion(this.bodies)
                changed[path, default: ([], 0, [], [:])].attempts += 1
                changed[path, default: ([], 0, [], [:])].tests.insert(sample.scenarioID)
                for (field, value) in this.values {
                    changed[path, default: ([], 0, [], [:])].values[field, default: []].insert(value)
                }
            }
        }
        // Two values at least of one field, in one body: a field that changed once, the same way everywhere, did not
        // change by itself.
        return changed.filter { _, seen in
            seen.attempts >= minimumChanges && seen.values.values.contains { $0.count >= 2 }
        }.map { path, seen in
            Suggestion(
                path: path, bodies: seen.bodies.sorted(), changed: seen.attempts,
                attempts: seen.tests.reduce(0) { $0 + (attemptsPerTest[$1] ?? 0) }, tests: seen.tests.sorted())
        }.sorted { ($0.changed, $1.path) > ($1.changed, $0.path) }
    }

    /// The path with its array positions made `[*]` (not inside a quoted key: `['x[1]']` stays).
    package static func general(_ path: String) -> String {
        var output = ""
        var rest = Substring(path)
        while let open = rest.firstIndex(of: "[") {
            output += rest[...open]
            rest = rest[rest.index(after: open)...]
            if let quote = rest.first, quote == "'" || quote == "\"" {
                // A quoted key, to its closing quote and bracket.
                let close = rest.dropFirst().firstRange(of: "\(quote)]")?.upperBound ?? rest.endIndex
                output += rest[..<close]
                rest = rest[close...]
                continue
            }
            let digits = rest.prefix { $0.isASCII && $0.isNumber }
            if !digits.isEmpty, rest.dropFirst(digits.count).first == "]" {
                output += "*"
                rest = rest.dropFirst(digits.count)
            }
        }
        return output + rest
    }

    /// The YAML of `mock.ignore.json` with the paths ignored `already` and the suggestions, each with why (`# response
    /// body; changed in 5 of 5 passing live attempts: checkout, login`), to put in place of the config's own.
    package static func yaml(_ suggestions: [Suggestion], already: [String]) -> String {
        var lines = ["mock:", "  ignore:", "    json:"]
        for path in already { lines.append("      - \(quoted(path))") }
        for suggestion in suggestions {
            // Test ids are data: on one line of the comment, without control characters.
            let tests =
                suggestion.tests.prefix(5).map(TerminalText.plain).joined(separator: ", ")
                + (suggestion.tests.count > 5 ? " and \(suggestion.tests.count - 5) more" : "")
            lines.append(
                "      - \(quoted(suggestion.path))  # \(suggestion.bodies.joined(separator: " and ")) body; changed in "
                    + "\(suggestion.changed) of \(suggestion.attempts) passing live attempts: \(tests)")
        }
        return lines.joined(separator: "\n")
    }

    /// A YAML double-quoted scalar.
    static func quoted(_ text: String) -> String {
        var output = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case _ where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value):
                output +=
                    "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                    + String(scalar.value, radix: 16)
            default: output.unicodeScalars.append(scalar)
            }
        }
        return output + "\""
    }
}

extension NetworkDiff {
    /// The JSON paths whose values differ between each live exchange and the recorded one it pairs with (the nth request
    /// with the same method, host, path and query with the nth recorded one), in request and in response bodies, each
    /// with its live value (compact JSON).
    package static func bodyChanges(
        recorded: [Exchange], live: [Exchange]
    ) -> (request: [String: String], response: [String: String]) {
        var request: [String: String] = [:]
        var response: [String: String] = [:]
        for case let (before?, exchange) in Self.pairs(recorded: recorded, live: live).pairs {
            if before.requestBody != exchange.requestBody, let old = Self.json(before.requestBody),
                let new = Self.json(exchange.requestBody)
            {
                for change in JSONDiff.changes(old, new) { request[change.path] = JSONDiff.render(change.after) }
            }
            if before.responseBody != exchange.responseBody, let old = Self.json(before.responseBody),
                let new = Self.json(exchange.responseBody)
            {
                for change in JSONDiff.changes(old, new) { response[change.path] = JSONDiff.render(change.after) }
            }
        }
        return (request, response)
    }
}
