import Foundation
import OrchestrateModel

/// What `orchestrate run` was asked to do.
package struct RunOptions: Sendable {
    package var configPath = "orchestrate.yml"
    package var workers: Int?
    package var mode: Mode?
    package var retries: Int?
    package var retryWhen: RetryWhen?
    package var only: [String] = []
    /// A Cucumber tag expression (`@smoke and not @wip`) that selects scenarios by their tags.
    package var tags: String?
    package var junitPath: String?
    /// `--annotations`: GitHub's workflow commands for the judged run; `nil`: when GITHUB_ACTIONS is true.
    package var annotations: AnnotationsChoice?
    /// `--summary PATH`: the run in Markdown.
    package var summaryPath: String?
    package var reportsDirectory: String?
    package var database: String?
    package var resume: UUID?
    package var strict = false
    package var lease: Duration?
    package var progress: ProgressChoice = .automatic
    /// The key CI nodes join one run under (`run --join KEY`, `agent --join KEY`): the first to arrive plans it.
    package var joinKey: String?
    /// Work run `attach` without planning (`agent --run RUN_ID`).
    package var attach: UUID?
    /// An agent: contributes slots to a run planned elsewhere, never plans one.
    package var agent = false
    /// An agent that serves run after run until it is stopped (`agent --forever`).
    package var forever = false
    /// The name this node's share of a joined run is kept under (default: the host name); a node that joins its
    /// finished run again under the same name re-runs that share.
    package var node: String?
    /// A node's re-run takes only what failed in its share.
    package var failedOnly = false
    /// Serve Prometheus metrics on this port (0: one the system picks, said on stderr).
    package var metricsPort: Int?
    /// SIGINT and SIGTERM stop the run's slots gracefully. False for a run inside another program (a test), whose
    /// signals are its own.
    package var trapsSignals = true
    /// The address the metrics are served on: loopback unless another is given (`0.0.0.0`: every address of the host).
    package var metricsAddress = "127.0.0.1"
    /// How long an agent waits for the run under its join key to be planned.
    package var planWait: Duration = .seconds(600)
    /// `--detect-new-flakes`: new tests run extra times, unless more than this share of the suite is new; `nil`: off.
    package var newTestsShare: Double?
    /// `--changed-since REV`: only the tests the change since REV can break (their footprints say which).
    package var changedSince: String?
    /// `--changed FILE…`: only the tests a change to these files can break.
    package var changed: [String] = []
    /// `--order`: which tests the slots take first.
    package var order: RunOrder = .makespan
    /// `--fail-fast N`: every host stops the run after N genuine failures.
    package var failFast: Int?
    /// `--sample`: the share of the tests a selection leaves out that run all the same (their failures are misses).
    package var sample: Double = 0

    /// Which tests the slots take first.
    package enum RunOrder: String, Sendable, CaseIterable {
        /// The longest expected first: the run ends soonest.
        case makespan
        /// New tests, those that failed lately and those whose footprint the change touches first, each group longest
        /// first: the first failures come soonest.
        case likelyFailing = "likely-failing"
    }

    package enum AnnotationsChoice: String, Sendable, CaseIterable {
        case github
        case none
    }

    package enum ProgressChoice: String, Sendable, CaseIterable {
        case automatic = "auto"
        case live
        case lines
        case none
    }

    package init() {}
}
