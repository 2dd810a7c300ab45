/// A failure that stops the coordinator (not a failing scenario: those are outcomes).
package struct CoordinatorError: Error, CustomStringConvertible, Sendable {
    package struct Code: Sendable, Hashable, CustomStringConvertible {
        private let name: String
        /// No port could be bound for a worker slot.
        package static let noFreePort = Code(name: "noFreePort")
        /// The queue stayed unreachable through the retries.
        package static let queueUnavailable = Code(name: "queueUnavailable")
        /// Every worker slot lost its supervisor process and none could be started again.
        package static let noSlots = Code(name: "noSlots")
        /// A slot's state machine gave it no next step: a bug in orchestrate, said rather than taken for a drained run.
        package static let slotStuck = Code(name: "slotStuck")
        package var description: String { name }
    }

    package let code: Code
    package let message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { message }
}
