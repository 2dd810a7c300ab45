/// Where a run is in its life (`runs.state`).
package enum RunState: String, Sendable, Codable, CaseIterable, Hashable {
    /// Planned, and being worked (or its coordinator died: `--resume` finishes it).
    case running
    /// Every scenario settled; judged and reported.
    case finished
    /// Stopped by a signal; its unfinished attempts are back in the queue for `--resume`.
    case interrupted
}
