import Coordinator
import MockServer
import OrchestrateModel
import Store

/// The exit codes (docs/ARCHITECTURE.md) and which errors give which.
package enum ExitStatus {
    package static let passed: Int32 = 0
    package static let scenarioFailed: Int32 = 1
    package static let badInput: Int32 = 2
    package static let infrastructure: Int32 = 3
    package static let interrupted: Int32 = 130

    /// A judged run's code: 1 when a test fails it (``RunReport/ScenarioEntry/failsRun(strict:)``); else 3 when a test
    /// failed only through an infrastructure incident (``Incident``) and is not quarantined (or `strict`); else 0.
    package static func code(for report: RunReport, strict: Bool) -> Int32 {
        if report.scenarios.contains(where: { $0.failsRun(strict: strict) }) { return scenarioFailed }
        let outage = report.scenarios.contains { $0.failedByIncident && (!$0.quarantined || strict) }
        return outage ? infrastructure : passed
    }

    /// One line for people; database errors without query values.
    package static func describe(_ error: any Error) -> String {
        Database.describe(error)
    }

    /// 2 for bad usage, config or input; 3 for infrastructure (database, ports, processes).
    package static func code(for error: any Error) -> Int32 {
        switch error {
        case is ConfigError, is UsageError:
            return badInput
        case let error as RunError:
            return error.exitStatus
        case let error as StoreError:
            return [.badConfiguration, .unknownRun].contains(error.code) ? badInput : infrastructure
        case let error as MockServerError:
            return error.code == .cassette ? badInput : infrastructure
        default:
            return infrastructure
        }
    }
}
