/// What went wrong between test code and orchestrate: a control API that cannot be reached or answered
/// with an error, a step expression that does not compile, a pickle that cannot be read.
public struct OrchestrateKitError: Error, CustomStringConvertible, Sendable {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        public var description: String { name }

        public static let control = Code(name: "control")
        public static let expression = Code(name: "expression")
        public static let pickle = Code(name: "pickle")
        public static let argument = Code(name: "argument")
        /// Several step definitions match one step.
        public static let ambiguous = Code(name: "ambiguous")
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
