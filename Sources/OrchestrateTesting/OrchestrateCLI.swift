import Foundation
import ProcessSupervisor

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The built `orchestrate` executable, run as a real child process.
package struct OrchestrateCLI: Sendable {
    package struct Result: Sendable {
        package var status: Termination.Reason
        package var stdout: String
        package var stderr: String

        package var exitCode: Int32? {
            if case .exited(let code) = status { return code }
            return nil
        }
    }

    /// Next to the test bundle in the build products folder; `ORCHESTRATE_TEST_EXECUTABLE` names another (an earlier
    /// build, to see a new test fail on it).
    package static var executable: String {
        if let other = ProcessInfo.processInfo.environment["ORCHESTRATE_TEST_EXECUTABLE"], !other.isEmpty {
            return other
        }
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("orchestrate").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return ".build/debug/orchestrate"
    }

    package let directory: String
    package var environment: [String: String]

    /// - Parameters:
    ///   - directory: where the command runs (its orchestrate.yml).
    ///   - database: the URL every command gets as ORCHESTRATE_DATABASE_URL.
    package init(directory: String, database: String?) {
        self.directory = directory
        var environment = ProcessInfo.processInfo.environment
        environment["CI"] = "true"
        environment["ORCHESTRATE_DATABASE_URL"] = database
        // The tests' own CI (GitHub Actions, say) is not the one a test stands for: a test that wants its annotations
        // sets these.
        for name in ["GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY"] { environment[name] = nil }
        self.environment = environment
    }

    /// Commands in `directory` on the project's own embedded cluster: no database named, and none of libpq's variables.
    package static func embedded(in directory: String) -> OrchestrateCLI {
        var cli = OrchestrateCLI(directory: directory, database: nil)
        for name in ["PGHOST", "PGDATABASE", "PGUSER", "PGPASSWORD", "PGPASSFILE", "PGSERVICE"] {
            cli.environment[name] = nil
        }
        return cli
    }

    /// Starts the command without waiting. An earlier command's output under the same name goes first: the files are
    /// made at a process's first byte, and one that writes none would be read as having written the old ones.
    /// `executable`: another program to run with the command's environment and folder (`script`, for a terminal).
    package func launch(
        _ arguments: [String], name: String = "cli", executable: String = Self.executable
    ) throws -> SupervisedProcess {
        for stream in ["stdout", "stderr"] { unlink("\(directory)/\(name).\(stream)") }
        var command = SupervisedCommand(
            executable: executable, arguments: arguments, environment: environment, workingDirectory: directory,
            stdoutPath: "\(directory)/\(name).stdout", stderrPath: "\(directory)/\(name).stderr"
        )
        command.timeout = .seconds(300)
        command.grace = .seconds(20)
        return try SupervisedProcess.launch(command)
    }

    /// Runs the command to its end.
    package func run(
        _ arguments: [String], name: String = "cli", executable: String = Self.executable
    ) async throws -> Result {
        let process = try launch(arguments, name: name, executable: executable)
        let termination = await process.wait()
        return output(termination, name: name)
    }

    package func output(_ termination: Termination, name: String = "cli") -> Result {
        Result(
            status: termination.reason,
            stdout: (try? String(contentsOfFile: "\(directory)/\(name).stdout", encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOfFile: "\(directory)/\(name).stderr", encoding: .utf8)) ?? ""
        )
    }
}

/// Whether a process exists (zombies of our own children count as gone once reaped).
package func processExists(_ pid: Int32) -> Bool {
    kill(pid, 0) == 0 || errno != ESRCH
}
