import Foundation
import OrchestrateModel
import Reports

/// Steps a scenario reported in files of its artifacts folder, for test runners that do not call the control
/// API: Cucumber Messages NDJSON (`testStepStarted`/`testStepFinished`, with the pickles and Gherkin documents
/// that name the steps), Cucumber JSON reports (`[{"elements": [{"steps": [...]}]}]`), and JUnit XML reports, whose
/// test cases become steps (a scenario that runs a runner of its own: its tests, their times and failures).
enum StepReports {
    /// The steps of every report in `folder` (top level, `*.ndjson`, `*.json` and `*.xml`, in name order), numbered
    /// from 1. Only the folder's own regular files are read, within the bound of results files (as ``TestReports``
    /// reads them). Steps of a Cucumber JSON report have durations but no start times unless the scenario has
    /// `start_timestamp`: they are laid end to end from `attemptStart`.
    static func steps(in path: String, attemptStart: Date) -> [Step] {
        guard let folder = try? FolderHandle(opening: path) else { return [] }
        var steps: [Step] = []
        for name in ((try? folder.names()) ?? []).sorted()
        where name.hasSuffix(".ndjson") || name.hasSuffix(".json") || name.hasSuffix(".xml") {
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

    /// Cucumber Messages (``CucumberMessagesReport/steps``).
    static func messages(_ data: Data) -> [Step] {
        CucumberMessagesReport(data).steps
    }

    /// A Cucumber JSON report (``CucumberJSONReport/steps(from:)``); one that is not an array of features has none.
    static func cucumberJSON(_ data: Data, attemptStart: Date) -> [Step] {
        (try? CucumberJSONReport(data, file: ""))?.steps(from: attemptStart) ?? []
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
                Step(
                    position: 0, keyword: "", name: result.id, status: StepStatus(rawValue: result.status.rawValue),
                    startedAt: clock,
                    finishedAt: finished, error: error))
            clock = finished
        }
        return steps
    }
}
