import OrchestrateModel

/// A failure that stops the coordinator (not a failing scenario: those are outcomes).
package struct CoordinatorError: CodedError {
    package typealias Code = ErrorCode<CoordinatorError>

    package let code: Code
    package let message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}

extension ErrorCode where Domain == CoordinatorError {
    /// No port could be bound for a worker slot.
    package static let noFreePort = Self("noFreePort")
    /// The queue stayed unreachable through the retries.
    package static let queueUnavailable = Self("queueUnavailable")
    /// Every worker slot lost its supervisor process and none could be started again.
    package static let noSlots = Self("noSlots")
    /// A slot's state machine gave it no next step: a bug in orchestrate, said rather than taken for a drained run.
    package static let slotStuck = Self("slotStuck")
}
