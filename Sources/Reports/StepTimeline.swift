import Foundation
import OrchestrateModel

/// An attempt's steps as the timeline file and the HTML report show them: each step's offset from the attempt's
/// start, its duration, its title and the exchanges under it; then the exchanges outside any reported step.
struct StepTimeline {
    struct Row {
        var step: Step
        /// `+0.210s`.
        var offset: String
        /// `nil` while the step is open.
        var milliseconds: Int64?
        var title: String
        var exchanges: [Exchange]
    }

    var rows: [Row]
    var outside: [Exchange]

    init(_ log: NetworkLog, attempt: AttemptRecord) {
        let start = attempt.startedAt ?? log.steps.first?.startedAt ?? log.exchanges.first?.startedAt ?? Date()
        let positions = Set(log.steps.map(\.position))
        rows = log.steps.map { step in
            Row(
                step: step, offset: String(format: "+%.3fs", step.startedAt.timeIntervalSince(start)),
                milliseconds: step.finishedAt.map { Int64(($0.timeIntervalSince(step.startedAt) * 1000).rounded()) },
                title: log.stepTitle(step.position) ?? step.name,
                exchanges: log.exchanges.filter { $0.stepPosition == step.position }
            )
        }
        outside = log.exchanges.filter { $0.stepPosition.map { !positions.contains($0) } ?? true }
    }
}
