import Logging
import MockServer
import OrchestrateModel
import Store

extension NetworkLogWriter {
    /// The writer of a project: its spool under `<project>/.orchestrate/spool`.
    package static func forProject(_ directory: String, database: Database, logger: Logger) -> NetworkLogWriter {
        NetworkLogWriter(
            store: ExchangeStore(database: database), spoolDirectory: "\(directory)/.orchestrate/spool", logger: logger
        )
    }

    /// Files an event of a mock server under its attempt (events outside an attempt are not kept).
    func append(_ event: MockEvent) {
        switch event {
        case .exchange(let exchange):
            if let attemptID = exchange.attemptID { append(exchange, attemptID: attemptID) }
        case .step(let step, let attemptID?):
            append(step, attemptID: attemptID)
        case .step(_, nil):
            break
        }
    }
}
