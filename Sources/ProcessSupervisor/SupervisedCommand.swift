/// A command for ``SupervisedProcess`` to run as the leader of its own process group.
///
/// The supervisor enforces ``timeout`` on the whole group, captures each output stream into a file
/// bounded to ``captureHeadBytes`` + ``captureTailBytes``, ends whatever the leader left behind in its
/// group when the leader exits, and ends the whole group if the launching process dies.
package struct SupervisedCommand: Sendable {
    /// Absolute path of the program.
    package var executable: String
    /// Arguments after the program name.
    package var arguments: [String]
    /// The complete environment (nothing is inherited implicitly), with ``sharedEnvironment``'s entries when set.
    package var environment: [String: String]
    /// Entries that many commands have in common, packed once; `environment` overrides them by name. A worker slot
    /// runs thousands of commands whose environments differ in a few entries: building and packing the whole of each
    /// would be most of a launch's work.
    package var sharedEnvironment: SharedEnvironment?
    package var workingDirectory: String?
    /// Where stdout goes; `nil` discards it.
    package var stdoutPath: String?
    /// Where stderr goes; `nil` discards it.
    package var stderrPath: String?
    /// Bytes kept from the start of each stream. Default 32 KiB.
    package var captureHeadBytes: Int = 32 * 1024
    /// Bytes kept from the end of each stream. Default 32 KiB.
    package var captureTailBytes: Int = 32 * 1024
    /// `nil`: no time limit.
    package var timeout: Duration?
    /// Time between SIGTERM and SIGKILL to the group. Default 5 s.
    package var grace: Duration = .seconds(5)
    /// Run as another user (root only), e.g. PostgreSQL's server, which refuses to run as root.
    package var user: (uid: UInt32, gid: UInt32)?

    package init(
        executable: String,
        arguments: [String] = [],
        environment: [String: String],
        workingDirectory: String? = nil,
        stdoutPath: String? = nil,
        stderrPath: String? = nil
    ) {
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
        self.workingDirectory = workingDirectory
        self.stdoutPath = stdoutPath
        self.stderrPath = stderrPath
    }

    /// `/bin/sh -c script`, the way scenario commands and templates run.
    package static func shell(_ script: String, environment: [String: String]) -> SupervisedCommand {
        SupervisedCommand(executable: "/bin/sh", arguments: ["-c", script], environment: environment)
    }
}
