import OrchestrateModel

/// Automatic quarantine after a run: a scenario whose flakiness score over the window reaches the threshold goes in
/// (its failures are reported, not fatal), an automatic entry whose score fell below it comes out. Entries made by hand
/// stay until removed by hand. It applies from the next run on: a run keeps the quarantine it started with.
package struct QuarantinePolicy: Sendable, Equatable {
    /// `nil`: automatic quarantine is off.
    package var threshold: Double?

    package init(threshold: Double?) {
        self.threshold = threshold
    }

    /// Whether the current automatic entries are needed to choose the ``candidates(ran:unsteady:automatic:)``. A
    /// threshold at or below the score of a scenario without flips (0.1) can be reached without a failure: then every
    /// scenario that ran is a candidate anyway.
    package var needsAutomaticEntries: Bool {
        guard let threshold else { return false }
        return threshold > FlakinessScore.withoutFlips
    }

    /// The scenarios of a run worth scoring: those with a failure in the run or in their recent history (`unsteady`;
    /// without a failure a score only falls, to at most 0.1) and automatic entries, which may have to come out. A suite
    /// that keeps passing costs no scoring at all. Empty when automatic quarantine is off.
    package func candidates(ran: [String], unsteady: Set<String>, automatic: Set<String>) -> [String] {
        guard threshold != nil else { return [] }
        guard needsAutomaticEntries else { return ran }
        return ran.filter { unsteady.contains($0) || automatic.contains($0) }
    }

    /// What goes in (with the reason stored) and what comes out, given the candidates' scores: those at the threshold
    /// or above go in, those below it come out. The store keeps entries made by hand as they are: it adds over none and
    /// releases only automatic ones.
    package func changes(scores: [(scenarioID: String, score: Double)]) -> Changes {
        guard let threshold else { return Changes() }
        var changes = Changes()
        for (id, score) in scores {
            if score >= threshold {
                changes.add.append(
                    .init(
                        scenarioID: id, score: score,
                        reason: "flakiness score \(Self.format(score)) reached the threshold \(Self.format(threshold))")
                )
            } else {
                changes.release.append(id)
            }
        }
        return changes
    }

    package struct Changes: Sendable, Equatable {
        package var add: [Entry] = []
        package var release: [String] = []

        package init() {}

        package struct Entry: Sendable, Equatable {
            package var scenarioID: String
            package var score: Double
            package var reason: String
        }
    }

    /// A score as people read it: at most two decimals (0.44, 0.3).
    static func format(_ value: Double) -> String {
        let rounded = (value * 100).rounded() / 100
        return rounded == rounded.rounded() ? String(Int(rounded)) : "\(rounded)"
    }
}
