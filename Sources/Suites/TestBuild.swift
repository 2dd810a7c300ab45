import Foundation

/// Building a suite's tests before they are listed or run (`suite.swiftpm`, `suite.xcodebuild`): once per process and
/// thing built, however many times the run asks (planning, then working its slots), its output on stderr, and a build
/// that fails one error at the config's line with the compiler's first errors.
enum TestBuild {
    /// How long a build may take.
    static let timeout = Duration.seconds(3600)

    private static let built = Built()

    /// Runs `command` (by `sh`, in the config's folder, with the suite's environment) unless this process built `key`
    /// already, saying so through the context; `what` names the config key in progress and errors.
    static func once(_ command: String, of key: String, context: SuiteContext, line: Int, what: String) async throws {
        guard await built.first(key) else { return }
        context.note("orchestrate: building the tests for \(what) (\(command))")
        do {
            _ = try await context.output(of: command + " 1>&2", timeout: timeout, line: line, what: "\(what)'s build")
        } catch {
            await built.forget(key)
            throw error
        }
    }

    /// What this process built already.
    private actor Built {
        private var keys = Set<String>()

        /// True the first time `key` is asked for.
        func first(_ key: String) -> Bool { keys.insert(key).inserted }

        func forget(_ key: String) { keys.remove(key) }
    }
}
