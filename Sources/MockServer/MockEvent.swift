import OrchestrateModel

/// What a mock server reports, in the order it happened: exchanges, and steps when they end
/// (or when the session ends with one still open).
package enum MockEvent: Sendable {
    case exchange(Exchange)
    case step(Step, attemptID: Int64?)

    package var attemptID: Int64? {
        switch self {
        case .exchange(let exchange): exchange.attemptID
        case .step(_, let attemptID): attemptID
        }
    }
}
