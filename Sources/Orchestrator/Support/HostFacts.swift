import Foundation
import ProcessSupervisor

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Facts about this machine and checkout, recorded with every run.
package enum HostFacts {
    /// The host name (no DNS lookup).
    package static var hostName: String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count) == 0 else { return "localhost" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? "localhost" : name
    }

    /// The revision and branch a run is recorded with (``gitRevision(in:)``, ``branch(in:environment:)``), asked side
    /// by side.
    static func git(in directory: String) async -> (revision: String?, branch: String?) {
        async let revision = gitRevision(in: directory)
        async let branch = branch(in: directory)
        return await (revision, branch)
    }

    /// The branch being tested: the CI's (a pull request's source branch first), else `git rev-parse --abbrev-ref
    /// HEAD`; `nil` on a detached HEAD or outside git.
    static func branch(
        in directory: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) async -> String? {
        for name in [
            "GITHUB_HEAD_REF", "GITHUB_REF_NAME", "CI_COMMIT_REF_NAME", "BUILDKITE_BRANCH", "CIRCLE_BRANCH",
            "BRANCH_NAME",
        ] {
            if let value = environment[name], !value.isEmpty { return value }
        }
        guard let name = await run(["git", "rev-parse", "--abbrev-ref", "HEAD"], in: directory), !name.isEmpty,
            name != "HEAD"
        else { return nil }
        return name
    }

    /// `git rev-parse HEAD` in `directory`, with `+dirty` when the work tree has changes to tracked files, or when
    /// git cannot say (a status too long to read, one that timed out); `nil` outside git.
    static func gitRevision(in directory: String) async -> String? {
        async let status = run(["git", "status", "--porcelain", "--untracked-files=no"], in: directory)
        guard let head = await run(["git", "rev-parse", "HEAD"], in: directory), !head.isEmpty else { return nil }
        return await status == "" ? head : "\(head)+dirty"
    }

    private static func run(_ arguments: [String], in directory: String) async -> String? {
        await output(of: arguments, in: directory)?.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// What `arguments` (a command found on PATH, never through a shell) print in `directory`, as they print it (bytes
    /// that are not UTF-8 as U+FFFD); `nil` when it cannot be run, does not exit 0 within 10 s, or prints more than
    /// `maximumBytes`.
    static func output(
        of arguments: [String], in directory: String, maximumBytes: Int = 64 * 1024
    ) async -> String? {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent(
            "orchestrate-git-\(UUID().uuidString)"
        ).path
        defer { try? FileManager.default.removeItem(atPath: output) }
        var command = SupervisedCommand(
            executable: "/usr/bin/env", arguments: arguments, environment: ProcessInfo.processInfo.environment,
            workingDirectory: directory, stdoutPath: output
        )
        command.timeout = .seconds(10)
        command.captureHeadBytes = maximumBytes
        command.captureTailBytes = 0
        guard let termination = try? await SupervisedProcess.run(command), termination.reason == .exited(0),
            termination.stdoutBytes <= Int64(maximumBytes)
        else { return nil }
        // Nothing printed leaves no file.
        guard termination.stdoutBytes > 0 else { return "" }
        return (try? Data(contentsOf: URL(fileURLWithPath: output))).map { String(decoding: $0, as: UTF8.self) }
    }
}
