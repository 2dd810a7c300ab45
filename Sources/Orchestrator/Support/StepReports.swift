import Foundation
import OrchestrateModel
import Reports

/// Steps a scenario reported in files of its artifacts folder, for test runners that do not call the control
/// API: Cucumber Messages NDJSON (`testStepStarted`/`testStepFinished`, with the pickles and Gherkin documents
/// that name the steps), Cucumber JSON reports (`[{"elements": [{"steps": [...]}]}]`), and JUnit XML reports, whose
/// test cases become steps (a scenario that runs a runner of its own: its tests, their times and failures).
enum StepReports {
    /// The steps of every report in `folder` (top level, `*.ndjson`, `*.json` and `*.xml`, in name order), numbered from 1.
    /// Only the folder's own regular files are read, within the bound of results files (as ``TestReports`` reads them).
    /// Steps of a Cucumber JSON report have durations but no start times unless the scenario has
    /// `start_timestamp`: they are laid end to end from `attemptStart`.
    static func steps(in path: String, attemptStart: Date) -> [Step] {
        guard let folder = try? FolderHandle(opening: path) else { return [] }
        var steps: [Step] = []
        for name in ((try? folder.names()) ?? []).sorted() where name.hasSuffix(".ndjson") || name.hasSuffix(".json") || name.hasSuffix(".xml") {
            guard let data = try? folder.contents(of: name, maximumBytes: JUnitResults.maximumBytes) else { continue }
            if name.hasSuffix(".xml") {
                steps += junit(data, file: name, attemptStart: attemptStart)
            } else {
                steps += name.hasSuffix(".ndjson") ? messages(data) : cucumberJSON(data, attemptStart: attemptStart)
            }
        }
        for index in steps.indices { steps[index].position = index + 1 }
        return steps
    }

    /// Cucumber Messages: a step starts with `testStepStarted` and ends with `testStepFinished`; its text comes from
    /// the pickle step and its keyword from the Gherkin step the pickle step was compiled from. Hooks are left out, and
    /// so are the steps of a test case the runner retried (`testCaseFinished` with `willBeRetried`): the attempt's
    /// steps are those of the run that counted.
    static func messages(_ data: Data) -> [Step] {
        var keywords: [String: String] = [:]  // Gherkin step id → keyword
        var pickleSteps: [String: (text: String, astNodeID: String?)] = [:]
        var testSteps: [String: String] = [:]  // test step id → pickle step id
        var started: [String: Step] = [:]  // testCaseStartedId/testStepId → step
        var order: [String] = []
        var retried = Set<String>()  // testCaseStartedIds the runner ran again
        var caseStarted: [String: String] = [:]  // testCaseStartedId/testStepId → testCaseStartedId
        for line in data.split(separator: UInt8(ascii: "\n")) {
            guard let envelope = (try? JSONSerialization.jsonObject(with: Data(line))) as? [String: Any] else { continue }
            if let document = envelope["gherkinDocument"] as? [String: Any] {
                collectKeywords(document, into: &keywords)
            } else if let pickle = envelope["pickle"] as? [String: Any] {
                for step in pickle["steps"] as? [[String: Any]] ?? [] {
                    guard let id = step["id"] as? String else { continue }
                    pickleSteps[id] = (step["text"] as? String ?? "", (step["astNodeIds"] as? [String])?.first)
                }
            } else if let testCase = envelope["testCase"] as? [String: Any] {
                for step in testCase["testSteps"] as? [[String: Any]] ?? [] {
                    if let id = step["id"] as? String, let pickleStep = step["pickleStepId"] as? String { testSteps[id] = pickleStep }
                }
            } else if let event = envelope["testStepStarted"] as? [String: Any] {
                guard let stepID = event["testStepId"] as? String, let pickleStepID = testSteps[stepID],
                    let at = timestamp(event["timestamp"])
                else { continue }
                let key = "\(event["testCaseStartedId"] as? String ?? "")/\(stepID)"
                caseStarted[key] = event["testCaseStartedId"] as? String ?? ""
                let pickleStep = pickleSteps[pickleStepID]
                started[key] = Step(
                    position: 0, keyword: pickleStep?.astNodeID.flatMap { keywords[$0] } ?? "",
                    name: pickleStep?.text ?? "", status: "started", startedAt: at)
                order.append(key)
            } else if let event = envelope["testCaseFinished"] as? [String: Any] {
                if event["willBeRetried"] as? Bool == true, let id = event["testCaseStartedId"] as? String { retried.insert(id) }
            } else if let event = envelope["testStepFinished"] as? [String: Any] {
                let key = "\(event["testCaseStartedId"] as? String ?? "")/\(event["testStepId"] as? String ?? "")"
                guard var step = started[key] else { continue }
                let result = event["testStepResult"] as? [String: Any] ?? [:]
                step.status = (result["status"] as? String ?? "unknown").lowercased()
                step.finishedAt = timestamp(event["timestamp"])
                step.error = result["message"] as? String
                started[key] = step
            }
        }
        return order.filter { !retried.contains(caseStarted[$0] ?? "") }.compactMap { started[$0] }
    }

    private static func collectKeywords(_ node: Any, into keywords: inout [String: String]) {
        if let object = node as? [String: Any] {
            if let id = object["id"] as? String, let keyword = object["keyword"] as? String, object["text"] != nil { keywords[id] = keyword }
            for value in object.values { collectKeywords(value, into: &keywords) }
        } else if let array = node as? [Any] {
            for value in array { collectKeywords(value, into: &keywords) }
        }
    }

    /// `{"seconds": 1700000000, "nanos": 5000000}`
    private static func timestamp(_ value: Any?) -> Date? {
        guard let object = value as? [String: Any], let seconds = (object["seconds"] as? NSNumber)?.doubleValue else { return nil }
        return Date(timeIntervalSince1970: seconds + ((object["nanos"] as? NSNumber)?.doubleValue ?? 0) / 1e9)
    }

    /// A Cucumber JSON report: features → elements (scenarios and backgrounds) → steps with `result.duration`.
    /// Hooks (`before`/`after`) are left out. The flavours differ: cucumber-js and Ruby Cucumber write whole nanoseconds;
    /// behave writes seconds (a fraction), keywords without their trailing space, an `error_message` that may be a list
    /// of lines, a `location` (`features/cart.feature:10`) per step, and no result for the steps after a failure
    /// (skipped), and lists the scenarios a `file:line` left out with no result at all (left out here too). A failure's
    /// error starts with its step's location when the report has one.
    static func cucumberJSON(_ data: Data, attemptStart: Date) -> [Step] {
        guard let features = (try? JSONSerialization.jsonObject(with: data)) as? [[String: Any]] else { return [] }
        var steps: [Step] = []
        var clock = attemptStart
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for feature in features {
            for element in feature["elements"] as? [[String: Any]] ?? [] {
                if let text = element["start_timestamp"] as? String,
                    let start = formatter.date(from: text) ?? ISO8601DateFormatter().date(from: text)
                {
                    clock = start
                }
                let elementSteps = element["steps"] as? [[String: Any]] ?? []
                guard elementSteps.contains(where: { $0["result"] != nil }) else { continue }
                for step in elementSteps {
                    let result = step["result"] as? [String: Any]
                    let duration = (result?["duration"] as? NSNumber)?.doubleValue ?? 0
                    let finished = clock.addingTimeInterval(CucumberResults.seconds(duration))
                    var keyword = step["keyword"] as? String ?? ""
                    if !keyword.isEmpty && !keyword.hasSuffix(" ") { keyword += " " }
                    var error = CucumberResults.errorMessage(result)
                    if let message = error, let location = step["location"] as? String { error = "\(location): \(message)" }
                    steps.append(
                        Step(
                            position: 0, keyword: keyword, name: step["name"] as? String ?? "",
                            status: (result?["status"] as? String ?? "skipped").lowercased(), startedAt: clock, finishedAt: finished, error: error))
                    clock = finished
                }
            }
        }
        return steps
    }

    /// A JUnit XML report (``JUnitResults``): a step per test case, named by its id (`classname/name`), with its
    /// status (passed, failed, skipped) and, when it failed, its message after the `file:line` the failure names. The
    /// runners' reports carry durations, not start times: the steps are laid end to end from `attemptStart`.
    static func junit(_ data: Data, file: String, attemptStart: Date) -> [Step] {
        guard let results = try? JUnitResults.parse(data, file: file) else { return [] }
        var steps: [Step] = []
        var clock = attemptStart
        for result in results {
            let finished = clock.addingTimeInterval(result.seconds ?? 0)
            let error = result.failure
            steps.append(
                Step(position: 0, keyword: "", name: result.id, status: result.status.rawValue, startedAt: clock, finishedAt: finished, error: error))
            clock = finished
        }
        return steps
    }
}
