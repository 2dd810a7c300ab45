import Foundation
import OrchestrateModel

/// A Cucumber Messages NDJSON report, read once into what orchestrate uses of it: the Gherkin documents' keywords and
/// lines, the pickles and their steps, the test cases, and the run's events in order. Both what the runner reported of
/// each scenario (``results``) and its steps (``steps``) come from this one reading. A line that is not a JSON object,
/// and a value of an unexpected type, are read as missing.
package struct CucumberMessagesReport: Sendable {
    /// A `timestamp` as written: `{"seconds": 1700000000, "nanos": 5000000}`.
    package struct Timestamp: Sendable {
        package var seconds: Double?
        package var nanos: Double?

        /// The instant, when the seconds are there.
        var date: Date? { seconds.map { Date(timeIntervalSince1970: $0 + (nanos ?? 0) / 1e9) } }
        /// Seconds since 1970, a missing part counting as 0.
        var value: Double { (seconds ?? 0) + (nanos ?? 0) / 1e9 }
    }

    package struct Pickle: Sendable {
        package var uri: String
        package var name: String
        /// The scenario's AST node first, then an outline's example row.
        package var astNodeIDs: [String]
    }

    package struct PickleStep: Sendable {
        package var text: String
        /// The Gherkin step it was compiled from.
        package var astNodeID: String?
    }

    package enum Event: Sendable {
        case testCaseStarted(id: String, testCaseID: String, at: Timestamp?)
        case testStepStarted(testCaseStartedID: String?, testStepID: String?, at: Timestamp?)
        case testStepFinished(
            testCaseStartedID: String?, testStepID: String?, status: String?, message: String?, at: Timestamp?)
        case testCaseFinished(testCaseStartedID: String?, willBeRetried: Bool, at: Timestamp?)
    }

    /// Gherkin steps' keywords and scenarios' and rows' lines, by AST node id.
    package var keywords: [String: String] = [:]
    package var lines: [String: Int] = [:]
    package var pickles: [String: Pickle] = [:]
    package var pickleSteps: [String: PickleStep] = [:]
    /// A test case's pickle, and the pickle step each of its test steps runs (hooks run none).
    package var pickleOfTestCase: [String: String] = [:]
    package var pickleStepOfTestStep: [String: String] = [:]
    package var events: [Event] = []

    package init(_ data: Data) {
        for line in data.lines() {
            guard let envelope = (try? JSONSerialization.jsonObject(with: line)) as? [String: Any] else {
                continue
            }
            if let document = envelope["gherkinDocument"] as? [String: Any] {
                collect(document)
            } else if let pickle = envelope["pickle"] as? [String: Any] {
                for step in pickle["steps"] as? [[String: Any]] ?? [] {
                    guard let id = step["id"] as? String else { continue }
                    pickleSteps[id] = PickleStep(
                        text: step["text"] as? String ?? "", astNodeID: (step["astNodeIds"] as? [String])?.first)
                }
                if let id = pickle["id"] as? String {
                    pickles[id] = Pickle(
                        uri: pickle["uri"] as? String ?? "", name: pickle["name"] as? String ?? "",
                        astNodeIDs: pickle["astNodeIds"] as? [String] ?? [])
                }
            } else if let testCase = envelope["testCase"] as? [String: Any] {
                if let id = testCase["id"] as? String { pickleOfTestCase[id] = testCase["pickleId"] as? String }
                for step in testCase["testSteps"] as? [[String: Any]] ?? [] {
                    if let id = step["id"] as? String, let pickleStep = step["pickleStepId"] as? String {
                        pickleStepOfTestStep[id] = pickleStep
                    }
                }
            } else if let event = envelope["testCaseStarted"] as? [String: Any] {
                guard let id = event["id"] as? String else { continue }
                events.append(
                    .testCaseStarted(
                        id: id, testCaseID: event["testCaseId"] as? String ?? "", at: Self.timestamp(event["timestamp"])
                    ))
            } else if let event = envelope["testStepStarted"] as? [String: Any] {
                events.append(
                    .testStepStarted(
                        testCaseStartedID: event["testCaseStartedId"] as? String,
                        testStepID: event["testStepId"] as? String,
                        at: Self.timestamp(event["timestamp"])))
            } else if let event = envelope["testStepFinished"] as? [String: Any] {
                let result = event["testStepResult"] as? [String: Any]
                events.append(
                    .testStepFinished(
                        testCaseStartedID: event["testCaseStartedId"] as? String,
                        testStepID: event["testStepId"] as? String,
                        status: (result?["status"] as? String)?.lowercased(), message: result?["message"] as? String,
                        at: Self.timestamp(event["timestamp"])))
            } else if let event = envelope["testCaseFinished"] as? [String: Any] {
                events.append(
                    .testCaseFinished(
                        testCaseStartedID: event["testCaseStartedId"] as? String,
                        willBeRetried: event["willBeRetried"] as? Bool == true,
                        at: Self.timestamp(event["timestamp"])))
            }
        }
    }

    private static func timestamp(_ value: Any?) -> Timestamp? {
        guard let object = value as? [String: Any] else { return nil }
        return Timestamp(
            seconds: (object["seconds"] as? NSNumber)?.doubleValue, nanos: (object["nanos"] as? NSNumber)?.doubleValue)
    }

    /// Every node of a Gherkin document with an id: a step's keyword (a node with a keyword and a text), a node's line.
    private mutating func collect(_ node: Any) {
        if let object = node as? [String: Any] {
            if let id = object["id"] as? String {
                if let keyword = object["keyword"] as? String, object["text"] != nil { keywords[id] = keyword }
                if let location = object["location"] as? [String: Any],
                    let line = (location["line"] as? NSNumber)?.intValue
                {
                    lines[id] = line
                }
            }
            for value in object.values { collect(value) }
        } else if let array = node as? [Any] {
            for value in array { collect(value) }
        }
    }

    /// A result per test case that counted (the last of one the runner retried: `testCaseFinished` without
    /// `willBeRetried`), in the order they finished: its pickle's uri and name, its status from its steps' and hooks'
    /// (``CucumberStatus``), its time from started to finished, the first failure's message, and its `uri:line` (an
    /// outline's example row's line).
    package var results: [RunnerTestResult] {
        var started: [String: (testCase: String, at: Double)] = [:]
        var statuses: [String: [String]] = [:]
        var messages: [String: String] = [:]
        var results: [RunnerTestResult] = []
        for event in events {
            switch event {
            case .testCaseStarted(let id, let testCaseID, let at):
                started[id] = (testCaseID, at?.value ?? 0)
                statuses[id] = []
            case .testStepFinished(let id?, _, let status, let message, _):
                statuses[id, default: []].append(status ?? "")
                if status == "failed", messages[id] == nil { messages[id] = message }
            case .testCaseFinished(let id?, false, let at):
                guard let begun = started[id], let pickleID = pickleOfTestCase[begun.testCase],
                    let pickle = pickles[pickleID]
                else { continue }
                let line = pickle.astNodeIDs.last.flatMap { lines[$0] }
                results.append(
                    RunnerTestResult(
                        classname: pickle.uri, name: pickle.name, status: CucumberStatus.of(statuses[id] ?? []),
                        seconds: at.map { max($0.value - begun.at, 0) }, message: messages[id],
                        location: line.map { "\(pickle.uri):\($0)" }))
            case .testStepStarted, .testStepFinished, .testCaseFinished:
                break
            }
        }
        return results
    }

    /// The steps that ran, in the order they started: a step starts with `testStepStarted` and ends with
    /// `testStepFinished`; its text comes from the pickle step and its keyword from the Gherkin step the pickle step
    /// was compiled from. Hooks are left out, and so are the steps of a test case the runner retried
    /// (`testCaseFinished` with `willBeRetried`): the attempt's steps are those of the run that counted.
    package var steps: [Step] {
        var started: [String: Step] = [:]  // testCaseStartedId/testStepId → step
        var order: [String] = []
        var caseStarted: [String: String] = [:]  // testCaseStartedId/testStepId → testCaseStartedId
        var retried = Set<String>()
        for event in events {
            switch event {
            case .testStepStarted(let caseID, let stepID?, let at):
                guard let pickleStepID = pickleStepOfTestStep[stepID], let at = at?.date else { continue }
                let key = "\(caseID ?? "")/\(stepID)"
                caseStarted[key] = caseID ?? ""
                let pickleStep = pickleSteps[pickleStepID]
                started[key] = Step(
                    position: 0, keyword: pickleStep?.astNodeID.flatMap { keywords[$0] } ?? "",
                    name: pickleStep?.text ?? "", status: .started,
                    startedAt: at)
                order.append(key)
            case .testCaseFinished(let caseID?, true, _):
                retried.insert(caseID)
            case .testStepFinished(let caseID, let stepID, let status, let message, let at):
                let key = "\(caseID ?? "")/\(stepID ?? "")"
                guard var step = started[key] else { continue }
                step.status = StepStatus(rawValue: status ?? "unknown")
                step.finishedAt = at?.date
                step.error = message
                started[key] = step
            case .testCaseStarted, .testStepStarted, .testCaseFinished:
                break
            }
        }
        return order.filter { !retried.contains(caseStarted[$0] ?? "") }.compactMap { started[$0] }
    }
}
