/// How flaky a scenario is, from its outcomes in order (oldest first, retries included, on one revision):
///
///     score = (flips + 1) / (transitions + 10)
///
/// a flip rate — the share of consecutive outcome pairs that differ — shrunk towards 0.1 by a Beta(1, 9) prior,
/// worth ten observations. A scenario seen a few times cannot look certainly flaky or certainly stable; one that
/// alternates every run approaches 1, one that never changes approaches 0.
package enum FlakinessScore {
    package static let priorFlips = 1.0
    package static let priorTransitions = 10.0
    /// The score of a scenario that never flipped and has no history: a scenario without a flip never scores higher.
    package static let withoutFlips = priorFlips / priorTransitions

    package static func score(_ outcomes: [Bool]) -> Double {
        let transitions = max(outcomes.count - 1, 0)
        let flips = zip(outcomes, outcomes.dropFirst()).filter { $0 != $1 }.count
        return (Double(flips) + priorFlips) / (Double(transitions) + priorTransitions)
    }
}
