import OrchestrateModel

/// The verdict of one scenario in one run, with the sentence that explains it.
package struct VerdictRule: Sendable {
    /// Outcomes in one mode, oldest first (`true` passed).
    package struct Outcomes: Sendable, Equatable {
        package var thisRun: [Bool]
        /// Earlier runs on the same git revision.
        package var history: [Bool]

        package init(thisRun: [Bool], history: [Bool] = []) {
            self.thisRun = thisRun
            self.history = history
        }

        /// Passed and failed in this run (retries), or flipped back and forth on the same revision. A single change
        /// (passes until the backend changed, fails since) is a change, not nondeterminism: it takes two flips.
        var isMixed: Bool {
            if thisRun.contains(true) && thisRun.contains(false) { return true }
            let all = history + thisRun
            return zip(all, all.dropFirst()).filter { $0 != $1 }.count >= 2
        }

        /// The run's result in this mode: its last attempt.
        var passed: Bool? { thisRun.last }
    }

    /// `plain`: the run made no exchange through its mock servers, and the reason names no backend.
    package static func judge(
        replay: Outcomes?, live: Outcomes?, plain: Bool = false
    ) -> (verdict: Verdict, reason: String) {
        for (mode, outcomes) in [("replay", replay), ("live", live)] {
            guard let outcomes, outcomes.isMixed else { continue }
            let run = outcomes.thisRun
            let lane = plain ? "" : "\(mode): "
            if run.contains(true) && run.contains(false) {
                return (.nondeterministic, "\(lane)\(Self.sequence(run)) in this run, with nothing else changed")
            }
            let passes = (outcomes.history + run).filter { $0 }.count
            return (
                .nondeterministic,
                "\(lane)passed \(passes) of \(outcomes.history.count + run.count) times on this revision"
            )
        }
        switch (replay?.passed, live?.passed) {
        case (true?, true?): return (.stable, "passes in replay and live")
        case (false?, false?): return (.failing, "fails in replay and live: a genuine failure")
        case (true?, false?): return (.drift, "passes in replay, fails live: the backend or its content changed")
        case (false?, true?): return (.staleRecording, "fails in replay, passes live: re-record it")
        case (let one?, nil), (nil, let one?): return one ? (.stable, "passes") : (.failing, "fails")
        case (nil, nil): return (.failing, "did not run")
        }
    }

    /// What a scenario that passed in a single-lane run gets when its history does not say otherwise; the queue stores
    /// it as such a scenario settles.
    package static var singleLanePass: (verdict: Verdict, reason: String) {
        judge(replay: Outcomes(thisRun: [true]), live: nil)
    }

    /// `failed, passed` for the reason text.
    static func sequence(_ outcomes: [Bool]) -> String {
        outcomes.map { $0 ? "passed" : "failed" }.joined(separator: ", then ")
    }
}
