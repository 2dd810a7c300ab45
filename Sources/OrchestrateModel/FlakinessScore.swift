/// How flaky a scenario is, from its outcomes in order (oldest first, retries included):
///
///     score = (flips + priorFlips) / (transitions + priorTransitions) = (flips + 1) / (transitions + 10)
///
/// where *transitions* are the consecutive pairs of its attempts on the same branch, git revision and kind of backend
/// (a controlled one: replay, mock, hybrid; the real one: live, record) and *flips* the pairs whose outcomes differ: a
/// flip rate shrunk towards 0.1 by a Beta(1, 9) prior worth ten observations. A scenario seen a few times cannot look
/// certainly flaky or certainly stable; one that alternates every attempt approaches 1, one that never changes
/// approaches 0.
///
/// The score is computed in one place, by PostgreSQL over the history (`RunStore.flakiness`, tested by
/// `StoreTests/FlakinessScoreTests`); this is its prior.
package enum FlakinessScore {
    package static let priorFlips = 1.0
    package static let priorTransitions = 10.0
    /// The score of a scenario that never flipped: a scenario without a flip never scores higher.
    package static let withoutFlips = priorFlips / priorTransitions
}
