import Foundation

/// Executes pickles with step definitions, reporting every step to orchestrate's control API as it opens
/// and ends, so that steps get timings in PostgreSQL and each exchange is filed under its step. After a
/// step that does not pass, the rest are reported as skipped. Outside a run it only prints.
///
/// A scenario executable for `suite.gherkin` is then one line:
/// ```swift
/// exit(await ScenarioRunner(steps: clinicSteps).main { ClinicApp(environment: .current) })
/// ```
public struct ScenarioRunner<World>: Sendable {
    public let steps: Steps<World>
    public let control: OrchestrateControl
    /// Where progress lines go (stdout by default).
    public var output: @Sendable (String) -> Void = { line in print(line) }

    public init(steps: Steps<World>, control: OrchestrateControl = OrchestrateControl()) {
        self.steps = steps
        self.control = control
    }

    /// Runs one pickle against a fresh `world`.
    public func run(_ pickle: Pickle, world: World) async -> ScenarioResult {
        output("Scenario: \(pickle.name) (\(pickle.uri)\(pickle.location.map { ":\($0.line)" } ?? ""))")
        var results: [StepResult] = []
        var reportingFailed = false
        func report(_ work: () async throws -> Void) async {
            do {
                try await work()
            } catch  where !reportingFailed {
                reportingFailed = true
                output("  warning: steps are not reported: \(error)")
            } catch {}
        }
        var stopped = false
        for step in pickle.steps {
            let started = Date()
            if stopped {
                await report {
                    try await control.step(
                        keyword: step.keyword, name: step.text, status: StepStatus.skipped.rawValue, startedAt: started,
                        finishedAt: started)
                }
                results.append(StepResult(keyword: step.keyword, text: step.text, status: .skipped, duration: .zero))
                output("  skipped    \(step.keyword)\(step.text)")
                continue
            }
            await report { try await control.stepStarted(keyword: step.keyword, name: step.text) }
            let clock = ContinuousClock.now
            var status = StepStatus.passed
            var message: String?
            do {
                if let (definition, values) = try steps.definition(for: step.text) {
                    let match = StepMatch(
                        text: step.text, values: values, docString: step.argument?.docString?.content,
                        dataTable: step.argument?.dataTable.map { $0.rows.map { $0.cells.map(\.value) } }
                    )
                    try await definition.body(world, match)
                } else {
                    status = .undefined
                    message = "no step definition matches \"\(step.text)\"; add one: \(Self.snippet(for: step))"
                }
            } catch let error as OrchestrateKitError where error.code == .ambiguous {
                status = .ambiguous
                message = error.message
            } catch {
                status = .failed
                message = "\(error)"
            }
            let duration = ContinuousClock.now - clock
            await report { try await control.stepFinished(status: status.rawValue, error: message) }
            results.append(
                StepResult(keyword: step.keyword, text: step.text, status: status, duration: duration, error: message))
            let milliseconds =
                duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
            output(
                "  \(status.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0)) \(step.keyword)\(step.text) (\(milliseconds) ms)"
            )
            if let message { output("             \(message)") }
            stopped = status != .passed
        }
        return ScenarioResult(name: pickle.name, steps: results)
    }

    /// The entry point of a scenario executable: runs the pickle orchestrate handed over
    /// (`ORCHESTRATE_PICKLE`), or every pickle of the NDJSON files named on the command line
    /// (`orchestrate gherkin pickles Features/*.feature > pickles.ndjson`). Returns the exit status:
    /// 0 all passed, 1 a scenario did not pass, 2 no pickles or step definitions that do not compile.
    public func main(
        arguments: [String] = Array(CommandLine.arguments.dropFirst()), makeWorld: @Sendable () async throws -> World
    ) async -> Int32 {
        guard steps.problems.isEmpty else {
            for problem in steps.problems { output("error: \(problem)") }
            return 2
        }
        var pickles: [Pickle] = []
        do {
            if let json = control.environment.pickleJSON {
                pickles = [try Pickle(json: json)]
            } else if !arguments.isEmpty {
                for file in arguments {
                    guard let data = FileManager.default.contents(atPath: file) else {
                        throw OrchestrateKitError(.pickle, "\(file): no such file")
                    }
                    pickles += try Pickle.pickles(ndjson: String(decoding: data, as: UTF8.self))
                }
            } else {
                throw OrchestrateKitError(
                    .pickle,
                    "no scenario: run this under orchestrate (suite.gherkin sets ORCHESTRATE_PICKLE) or name NDJSON files of `orchestrate gherkin pickles`"
                )
            }
        } catch {
            output("error: \(error)")
            return 2
        }
        var failed = 0
        for pickle in pickles {
            let result: ScenarioResult
            do {
                result = await run(pickle, world: try await makeWorld())
            } catch {
                output("error: the scenario's world cannot be made: \(error)")
                failed += 1
                continue
            }
            if !result.passed { failed += 1 }
        }
        if pickles.count > 1 { output("\(pickles.count - failed) of \(pickles.count) scenarios passed") }
        return failed == 0 ? 0 : 1
    }

    /// A step definition to start from, Cucumber style: quoted text becomes {string}, numbers {int} or {float}.
    static func snippet(for step: Pickle.Step) -> String {
        var expression = step.text.replacingOccurrences(of: #""[^"]*""#, with: "{string}", options: .regularExpression)
        expression = expression.replacingOccurrences(
            of: #"(?<![\w.])-?\d+\.\d+(?![\w.])"#, with: "{float}", options: .regularExpression)
        expression = expression.replacingOccurrences(
            of: #"(?<![\w.])-?\d+(?![\w.])"#, with: "{int}", options: .regularExpression)
        expression = expression.replacingOccurrences(of: "(", with: "\\\\(").replacingOccurrences(
            of: "/", with: "\\\\/")
        let verb = step.keyword == "* " ? "given" : step.keyword.trimmingCharacters(in: .whitespaces).lowercased()
        return "steps.\(verb)(\"\(expression.replacingOccurrences(of: "\"", with: "\\\""))\") { world, match in … }"
    }
}

public enum StepStatus: String, Sendable {
    case passed, failed, skipped, undefined, ambiguous
}

public struct StepResult: Sendable {
    public var keyword: String
    public var text: String
    public var status: StepStatus
    public var duration: Duration
    public var error: String?
}

public struct ScenarioResult: Sendable {
    public var name: String
    public var steps: [StepResult]

    public var passed: Bool { steps.allSatisfy { $0.status == .passed } }
    /// The first step that did not pass.
    public var failure: StepResult? { steps.first { $0.status != .passed } }
}
