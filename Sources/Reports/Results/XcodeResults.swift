import Foundation

/// What Xcode says of its tests: the tests `xcodebuild -enumerate-tests -test-enumeration-format json` lists, and the
/// results `xcrun xcresulttool get test-results tests --format json` reads from a result bundle — in both shapes in
/// use: Xcode 16's (a `duration` string in the machine's locale, `"0,012s"`, `"1m 3s"`) and Xcode 26's
/// (`durationInSeconds`, `nodeIdentifierURL`, and a test case's runs as "First Run", "Retry 1"… repetitions).
package enum XcodeResults {
    /// The enabled tests' identifiers (`Target/Class/method`), in the listing's order; errors it reports are one error.
    package static func enumeratedTests(_ data: Data, file: String) throws -> [String] {
        guard let document = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw RunnerResultsError(.notAReport, "\(file):1: not xcodebuild's test enumeration (a JSON object)")
        }
        let errors = (document["errors"] as? [Any] ?? []).map { error in
            (error as? [String: Any]).flatMap { $0["message"] as? String ?? $0["description"] as? String } ?? "\(error)"
        }
        guard errors.isEmpty else {
            throw RunnerResultsError(
                .listingFailed,
                "xcodebuild could not list the tests: \(errors.joined(separator: "; "))")
        }
        var identifiers: [String] = []
        func collect(_ node: Any, enabled: Bool) {
            if let object = node as? [String: Any] {
                if enabled, let identifier = object["identifier"] as? String { identifiers.append(identifier) }
                for (key, value) in object where key != "disabledTests" {
                    collect(value, enabled: enabled || key == "enabledTests")
                }
            } else if let array = node as? [Any] {
                for value in array { collect(value, enabled: enabled) }
            }
        }
        collect(document, enabled: false)
        var seen = Set<String>()
        return identifiers.filter { seen.insert($0).inserted }
    }

    /// One result per test case: classname `Target/Class` (the bundle named by the node above the suite, or by Xcode
    /// 26's `nodeIdentifierURL`), name the method as Xcode writes it (`testLogin()`). A test the runner repeated ends
    /// as its last repetition did; the message is its first failure's, with the `File.swift:line` it starts with.
    package static func tests(_ data: Data, file: String) throws -> [RunnerTestResult] {
        guard let document = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
            let nodes = document["testNodes"] as? [Any]
        else {
            throw RunnerResultsError(
                .notAReport,
                "\(file):1: not xcresulttool's test results (an object with testNodes)")
        }
        var results: [RunnerTestResult] = []
        func walk(_ node: [String: Any], bundle: String?) {
            let type = node["nodeType"] as? String ?? ""
            let children = node["children"] as? [[String: Any]] ?? []
            guard type == "Test Case" else {
                let isBundle = type.hasSuffix("test bundle")  // "Unit test bundle", "UI test bundle"
                for child in children { walk(child, bundle: isBundle ? node["name"] as? String : bundle) }
                return
            }
            let name = node["name"] as? String ?? ""
            var classname = ""
            if let url = node["nodeIdentifierURL"] as? String, let components = URLComponents(string: url) {
                // test://com.apple.xcode/Project/Target/Class/method
                let parts = components.path.split(separator: "/").map(String.init)
                if parts.count >= 3 { classname = parts[parts.count - 3] + "/" + parts[parts.count - 2] }
            }
            if classname.isEmpty {
                let identifier = node["nodeIdentifier"] as? String ?? name
                let suite = identifier.split(separator: "/").dropLast().joined(separator: "/")
                classname = [bundle, suite.isEmpty ? nil : suite].compactMap { $0 }.joined(separator: "/")
            }
            let repetitions = children.filter { $0["nodeType"] as? String == "Repetition" }
            let outcome = (repetitions.last?["result"] as? String) ?? node["result"] as? String ?? ""
            let failure = firstFailure(in: children)
            let status: RunnerTestResult.Status =
                switch outcome {
                case "Passed", "Expected Failure": .passed
                case "Skipped": .skipped
                default: .failed
                }
            var seconds = (node["durationInSeconds"] as? NSNumber)?.doubleValue
            if seconds == nil, let text = node["duration"] as? String { seconds = durationText(text) }
            results.append(
                RunnerTestResult(
                    classname: classname, name: name, status: status, seconds: seconds,
                    message: status == .passed ? nil : failure?.message ?? (status == .skipped ? nil : outcome),
                    location: status == .passed ? nil : failure?.location))
        }
        for case let node as [String: Any] in nodes { walk(node, bundle: nil) }
        return results
    }

    /// The first failure message under `nodes` (repetitions included): `LoginTests.swift:42: XCTAssertTrue failed`.
    private static func firstFailure(in nodes: [[String: Any]]) -> (message: String, location: String?)? {
        for node in nodes {
            if node["nodeType"] as? String == "Failure Message", let text = node["name"] as? String {
                let location = JUnitResults.location(in: text)
                var message = text
                if let location, let range = text.range(of: location + ": ") {
                    message = String(text[range.upperBound...])
                }
                return (message, location)
            }
            if let found = firstFailure(in: node["children"] as? [[String: Any]] ?? []) { return found }
        }
        return nil
    }

    /// Xcode 16's duration text: `"0,012s"`, `"1.5s"`, `"1m 3s"`, `"2h 1m"`, `"15ms"` (a comma is the locale's decimal
    /// point); `nil` for anything else.
    package static func durationText(_ text: String) -> Double? {
        var total = 0.0
        var found = false
        for part in text.split(separator: " ") {
            let word = part.replacingOccurrences(of: ",", with: ".")
            let units: [(String, Double)] = [("ms", 0.001), ("h", 3600), ("m", 60), ("s", 1)]
            guard let (unit, scale) = units.first(where: { word.hasSuffix($0.0) }),
                let value = Double(word.dropLast(unit.count))
            else {
                return nil
            }
            total += value * scale
            found = true
        }
        return found ? total : nil
    }
}
