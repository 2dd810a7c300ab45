import Foundation

/// What an attempt did on the network, step by step: its steps and its exchanges (each naming its step).
package struct NetworkLog: Sendable, Equatable {
    package var steps: [Step]
    /// In the order the mock server saw them.
    package var exchanges: [Exchange]

    package init(steps: [Step] = [], exchanges: [Exchange] = []) {
        self.steps = steps
        self.exchanges = exchanges
    }

    /// `When I tell the bot "hello"`: a step's keyword and text.
    package func stepTitle(_ position: Int) -> String? {
        guard let step = steps.first(where: { $0.position == position }) else { return nil }
        let keyword = step.keyword.trimmingCharacters(in: .whitespaces)
        return keyword.isEmpty ? step.name : "\(keyword) \(step.name)"
    }
}
