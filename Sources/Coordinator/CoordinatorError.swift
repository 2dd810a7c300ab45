/// A failure that stops the coordinator (not a failing scenario: those are outcomes).
public struct CoordinatorError: Error, CustomStringConvertible, Sendable {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private let name: String
        /// No port could be bound for a worker slot.
        public static let noFreePort = Code(name: "noFreePort")
        /// The queue stayed unreachable through the retries.
        public static let queueUnavailable = Code(name: "queueUnavailable")
        public var description: String { name }
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
