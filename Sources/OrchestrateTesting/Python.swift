import Foundation
import OrchestrateModel

/// Python 3 programs the tests use as outside oracles (the official Cucumber parser, haralyzer, junitparser), which
/// `make test` installs from PyPI. A failing program fails the test that ran it: it never skips.
package enum Python {
    /// The output of `python3 ARGUMENTS…`, or an error with what it wrote on stderr.
    package static func run(_ arguments: [String], hint: String) throws -> String {
        let process = python(arguments)
        let errors = try TemporaryFile()
        defer { errors.remove() }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errors.path))
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw PythonError(
                description:
                    "python3 \(arguments.prefix(2).joined(separator: " "))… exited with \(process.terminationStatus) (\(hint)): \(errors.read())"
            )
        }
        return text
    }

    /// The output lines of a script given as text (`python3 -c SCRIPT ARGUMENTS…`).
    package static func lines(script: String, arguments: [String], hint: String) throws -> [String] {
        try run(["-c", script] + arguments, hint: hint).split(separator: "\n").map(String.init)
    }

    /// ``run(_:hint:)`` waited for off Swift's cooperative pool, whose few threads (one per core) a program that runs
    /// for a minute would otherwise hold: every other test would wait with it.
    package static func run(_ arguments: [String], hint: String) async throws -> String {
        try await blockingOffPool { try run(arguments, hint: hint) }
    }

    /// ``lines(script:arguments:hint:)`` waited for off the cooperative pool.
    package static func lines(script: String, arguments: [String], hint: String) async throws -> [String] {
        try await blockingOffPool { try lines(script: script, arguments: arguments, hint: hint) }
    }

    /// The exit status of `python3 ARGUMENTS…` run with `environment` added, its output discarded (a runner whose
    /// failing tests are the point: pytest exits 1), waited for off the cooperative pool.
    package static func status(_ arguments: [String], environment: [String: String] = [:]) async throws -> Int32 {
        try await blockingOffPool {
            let process = python(arguments, environment: environment)
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            return process.terminationStatus
        }
    }

    /// `python3 ARGUMENTS…` with `environment` added to this process's, reading nothing from stdin; not started.
    private static func python(_ arguments: [String], environment: [String: String] = [:]) -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3"] + arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.standardInput = FileHandle.nullDevice
        return process
    }

}

package struct PythonError: Error, CustomStringConvertible {
    package var description: String
}

/// A file for one program's stderr, removed afterwards (a pipe that nobody reads could fill and stall the program).
private struct TemporaryFile {
    let path = "/tmp/orch-py-\(UUID().uuidString.prefix(8).lowercased())"

    init() throws {
        guard FileManager.default.createFile(atPath: path, contents: nil) else {
            throw PythonError(description: "cannot create \(path)")
        }
    }

    func read() -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}
