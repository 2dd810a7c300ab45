import Foundation
import OrchestrateModel

/// What `orchestrate run` was asked to do.
package struct RunOptions: Sendable {
    package var configPath = "orchestrate.yml"
    package var workers: Int?
    package var mode: Mode?
    package var retries: Int?
    package var only: [String] = []
    /// A Cucumber tag expression (`@smoke and not @wip`) that selects scenarios by their tags.
    package var tags: String?
    package var junitPath: String?
    package var reportsDirectory: String?
    package var database: String?
    package var resume: UUID?
    package var strict = false
    package var lease: Duration?
    package var progress: ProgressChoice = .automatic

    package enum ProgressChoice: String, Sendable, CaseIterable {
        case automatic = "auto"
        case live
        case lines
        case none
    }

    package init() {}
}
