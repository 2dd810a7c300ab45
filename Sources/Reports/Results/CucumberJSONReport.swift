import Foundation
import OrchestrateModel

/// A Cucumber JSON report, read once: features → elements (scenarios and backgrounds) → hooks and steps, each with its
/// `result`. Both what a scenario's runner reported of it (``results``) and its steps (``steps(from:)``) come from
/// this one reading. The flavours differ: cucumber-js and Ruby Cucumber write whole nanoseconds; behave writes seconds
/// (a fraction), keywords without their trailing space, an `error_message` that may be a list of lines, a `location`
/// (`features/cart.feature:10`) per scenario and step, and no result for the steps after a failure (skipped), and lists
/// the scenarios a `file:line` left out with no result at all. A value of an unexpected type is read as missing.
package struct CucumberJSONReport: Sendable {
    package struct Element: Sendable {
        package var isBackground: Bool
        package var name: String
        /// `uri:line` (cucumber-js: the feature's uri and the scenario's line; behave: its `location`).
        package var location: String?
        /// The file the scenario is in: its location's, else the feature's uri.
        package var file: String
        /// `start_timestamp`, when the report has one.
        package var started: Date?
        package var hooks: [Step]
        package var steps: [Step]
    }

    package struct Step: Sendable {
        package var keyword: String
        package var name: String
        package var location: String?
        /// Whether the step has a `result` at all (behave leaves it off the steps after a failure).
        package var hasResult: Bool
        /// Lowercased; `nil` when its result says none.
        package var status: String?
        /// Seconds.
        package var duration: Double
        package var error: String?
    }

    package var elements: [Element]

    /// Reads `data`; `file` names it in the error when it is not an array of features.
    package init(_ data: Data, file: String) throws {
        guard let features = (try? JSONSerialization.jsonObject(with: data)) as? [[String: Any]] else {
            throw RunnerResultsError(.notAReport, "\(file):1: not a Cucumber JSON report (an array of features)")
        }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        elements = features.flatMap { feature -> [Element] in
            let uri = feature["uri"] as? String ?? ""
            return (feature["elements"] as? [[String: Any]] ?? []).map { element in
                var location = (element["line"] as? NSNumber).map { "\(uri):\($0.intValue)" }
                if let place = element["location"] as? String, place.contains(":") { location = place }
                let started = (element["start_timestamp"] as? String).flatMap {
                    formatter.date(from: $0) ?? ISO8601DateFormatter().date(from: $0)
                }
                return Element(
                    isBackground: element["type"] as? String == "background", name: element["name"] as? String ?? "",
                    location: location,
                    file: location.map { String($0[..<($0.lastIndex(of: ":") ?? $0.endIndex)]) } ?? uri,
                    started: started,
                    hooks: ((element["before"] as? [[String: Any]] ?? []) + (element["after"] as? [[String: Any]] ?? []))
                        .map(Self.step),
                    steps: (element["steps"] as? [[String: Any]] ?? []).map(Self.step))
            }
        }
    }

    private static func step(_ object: [String: Any]) -> Step {
        let result = object["result"] as? [String: Any]
        let error =
            (result?["error_message"] as? String) ?? (result?["error_message"] as? [String])?.joined(separator: "\n")
        return Step(
            keyword: object["keyword"] as? String ?? "", name: object["name"] as? String ?? "",
            location: object["location"] as? String,
            hasResult: object["result"] != nil, status: (result?["status"] as? String)?.lowercased(),
            duration: seconds((result?["duration"] as? NSNumber)?.doubleValue ?? 0),
            error: error)
    }

    /// A step's duration in seconds: cucumber-js writes whole nanoseconds, behave a fraction of seconds.
    static func seconds(_ duration: Double) -> Double {
        duration.rounded() == duration && duration >= 1 ? duration / 1e9 : duration
    }

    /// A result per scenario (backgrounds are not scenarios): failed when a step or hook did (or was undefined,
    /// pending, …), skipped when all were (a step without a result counts as skipped), passed otherwise; its time the
    /// sum of its steps' and hooks', its message the first failure's.
    package var results: [RunnerTestResult] {
        elements.filter { !$0.isBackground }.map { element in
            // Hooks count as steps do: a Before hook that failed fails the scenario whose steps were then skipped.
            let all = element.hooks + element.steps
            let statuses = all.map { $0.status ?? "skipped" }
            return RunnerTestResult(
                classname: element.file, name: element.name, status: CucumberStatus.of(statuses),
                seconds: all.reduce(0) { $0 + $1.duration },
                message: all.first { $0.status == "failed" && $0.error != nil }?.error, location: element.location)
        }
    }

    /// The steps of every scenario and background that ran (hooks left out), a failure's error after its step's
    /// location when the report has one. Reports carry durations: steps are laid end to end from a scenario's
    /// `start_timestamp`, else from where the one before ended, starting at `attemptStart`.
    package func steps(from attemptStart: Date) -> [OrchestrateModel.Step] {
        var steps: [OrchestrateModel.Step] = []
        var clock = attemptStart
        for element in elements {
            if let started = element.started { clock = started }
            guard element.steps.contains(where: \.hasResult) else { continue }
            for step in element.steps {
                let finished = clock.addingTimeInterval(step.duration)
                let keyword = step.keyword.isEmpty || step.keyword.hasSuffix(" ") ? step.keyword : step.keyword + " "
                let error = step.error.map { message in step.location.map { "\($0): \(message)" } ?? message }
                steps.append(
                    OrchestrateModel.Step(
                        position: 0, keyword: keyword, name: step.name,
                        status: StepStatus(rawValue: step.status ?? "skipped"), startedAt: clock,
                        finishedAt: finished, error: error))
                clock = finished
            }
        }
        return steps
    }
}

/// A Cucumber scenario's status from its steps': failed when one failed (or was undefined, ambiguous, pending, or of a
/// status not known to pass — `unknown`, none); skipped when all were (or none ran); passed otherwise.
enum CucumberStatus {
    static func of(_ statuses: [String]) -> RunnerTestResult.Status {
        if statuses.contains(where: { !["passed", "skipped"].contains($0) }) { return .failed }
        if statuses.isEmpty || statuses.allSatisfy({ $0 == "skipped" }) { return .skipped }
        return .passed
    }
}
