/// What a test touched on its last run at `revision` (the store keeps one per test and revision; a selection reads
/// them): paths from the repository's root (a folder ends with `/`), the lines it ran of the files its coverage saw,
/// and the endpoints of its exchanges as `GET api.x.test/v1/carts/{id}`.
package struct Footprint: Sendable, Equatable {
    package var revision: String
    package var files: [String]
    package var endpoints: [String]
    /// The kinds of file (extensions: `py`) its coverage measured: a changed file of such a kind that coverage
    /// measured (another footprint has its lines) and this one lacks, its test did not run. A changed file that no
    /// coverage measured is untracked for every test.
    package var covers: [String]
    /// The lines the test ran of the files its coverage saw (the others in `files`: its own, whole); a change to such
    /// a file touches the test only where it reaches those lines.
    package var lines: [String: LineSet]

    package init(
        revision: String, files: [String], endpoints: [String], covers: [String] = [], lines: [String: LineSet] = [:]
    ) {
        self.revision = revision
        self.files = files
        self.endpoints = endpoints
        self.covers = covers
        self.lines = lines
    }

    /// Whether its coverage knows every file of `path`'s kind it ran.
    package func covers(_ path: String) -> Bool {
        guard !covers.isEmpty, let dot = path.lastIndex(of: "."), !path[dot...].contains("/") else { return false }
        return covers.contains(String(path[path.index(after: dot)...]))
    }
}
