import Foundation
import OrchestrateModel
import ProcessSupervisor

/// `suite.list`: a command that prints the suite's test ids, one per line (`pytest --collect-only -q | grep ::`,
/// `swift test list`), run by `sh` in the config's folder with the suite's environment when a run is planned. Every
/// line that is not blank is an id; each becomes a scenario that `suite.command` runs with `{id}` filled in.
enum TestListing {
    /// More output than this is refused: a suite of a hundred thousand tests lists a few megabytes.
    static let maximumBytes = 16 << 20

    /// The ids `command` prints, in its order; errors name the config's `file:line` and say what the command said.
    static func ids(
        command: String, directory: String, environment: [String: String], timeout: Duration, file: String, line: Int,
        what: String = "suite.list"
    ) async throws -> [String] {
        let output = try await self.output(
            of: command, directory: directory, environment: environment, timeout: timeout, file: file, line: line,
            what: what)
        return try ids(in: output, of: command, file: file, line: line, what: what)
    }

    /// The ids in what `command` printed (`output`): every line that is not blank, checked, none twice.
    static func ids(
        in output: (text: String, said: String), of command: String, file: String, line: Int, what: String
    ) throws -> [String] {
        var seen = Set<String>()
        var ids: [String] = []
        for (number, id) in lines(of: output.text).enumerated() {
            guard !id.isEmpty else { continue }
            try check(id, file: file, line: line, from: "\(what) (\(command)) printed, on its line \(number + 1),")
            guard seen.insert(id).inserted else {
                throw ConfigError(
                    .duplicateID,
                    file: file, line: line, "\(what) (\(command)) printed \"\(id)\" twice; test ids must be unique")
            }
            ids.append(id)
        }
        guard !ids.isEmpty else {
            throw ConfigError(
                .noScenarios,
                file: file, line: line,
                "\(what) (\(command)) printed no test id\(output.said.isEmpty ? "" : " (it said: \(output.said))")")
        }
        return ids
    }

    /// The lines of a listing without the spaces around them: they end at a line feed (CRLF is one character to Swift);
    /// a carriage return anywhere else stays, for ``check(_:file:line:column:from:)`` to refuse. A listing of printable
    /// ASCII (most are, thousands of ids at every planning) is split by its bytes.
    static func lines(of text: String) -> [String] {
        guard text.utf8.allSatisfy({ $0 == UInt8(ascii: "\n") || (0x20...0x7E).contains($0) }) else {
            return text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
                .map { $0.trimmingCharacters(in: .whitespaces) }
        }
        return text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { line in
            let start = line.firstIndex { $0 != UInt8(ascii: " ") } ?? line.endIndex
            let end = line[start...].lastIndex { $0 != UInt8(ascii: " ") }.map(line.index(after:)) ?? start
            return String(text[start..<end])
        }
    }

    /// An id from outside orchestrate.yml (what a listing printed, a feature file's scenario) held to the rule of its
    /// ids: one line of printable characters. One that breaks it is one error at `file:line` naming `origin`, with the
    /// id escaped.
    static func check(
        _ id: String, file: String, line: Int, column: Int? = nil, from origin: String
    ) throws(ConfigError) {
        guard let control = TerminalText.firstControl(in: id) else { return }
        throw ConfigError(
            .badID,
            file: file, line: line, column: column,
            "\(origin) a test id with a control character (\(TerminalText.name(control))): \"\(TerminalText.escaped(id))\"; test ids are one line of printable characters"
        )
    }

    /// What `command` prints (at most ``maximumBytes``), run by `sh` in `directory`, and the last lines of its errors;
    /// a command that fails is one error at the config's `file:line`, naming `what` and quoting those lines.
    static func output(
        of command: String, directory: String, environment: [String: String], timeout: Duration, file: String,
        line: Int, what: String
    ) async throws -> (text: String, said: String) {
        func failure(_ message: String) -> ConfigError {
            ConfigError(.commandFailed, file: file, line: line, "\(what) (\(command)) \(message)")
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "orchestrate-list-\(UUID().uuidString.prefix(8))"
        ).path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var run = SupervisedCommand(
            executable: "/bin/sh", arguments: ["-c", command],
            environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
            workingDirectory: directory, stdoutPath: "\(folder)/stdout", stderrPath: "\(folder)/stderr")
        run.captureHeadBytes = maximumBytes
        run.captureTailBytes = 0
        run.timeout = timeout
        let termination = try await SupervisedProcess.run(run)
        let errors = (try? String(contentsOfFile: "\(folder)/stderr", encoding: .utf8)) ?? ""
        // The first lines that say "error:" (a compiler's), else the last lines.
        let lines = errors.split(separator: "\n")
        let flagged = lines.filter { $0.contains("error:") }
        let said = (flagged.isEmpty ? Array(lines.suffix(3)) : Array(flagged.prefix(3))).joined(separator: " | ")
        switch termination.reason {
        case .exited(0): break
        case .exited(let status): throw failure("exited with status \(status)\(said.isEmpty ? "" : ": \(said)")")
        case .timedOut: throw failure("did not finish within \(timeout)")
        case .spawnFailed(let code): throw failure("could not start /bin/sh: \(String(cString: strerror(code)))")
        case .signaled(let signal), .terminated(let signal): throw failure("ended by signal \(signal)")
        case .supervisorDied: throw failure("ended: its supervisor died")
        }
        guard termination.stdoutBytes <= maximumBytes else { throw failure("printed more than \(maximumBytes) bytes") }
        let text = String(
            decoding: (try? Data(contentsOf: URL(fileURLWithPath: "\(folder)/stdout"))) ?? Data(), as: UTF8.self)
        return (text, said)
    }
}
