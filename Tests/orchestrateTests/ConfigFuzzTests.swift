import Foundation
import OrchestrateTesting
import ProcessSupervisor
import Testing

/// Mutants of a real orchestrate.yml, run through `orchestrate run`: each is a valid run, or one error line and exit 2
/// — never a signal, never a hang.
@Suite("orchestrate.yml under fuzzing", .timeLimit(.minutes(5)))
struct ConfigFuzzTests {
    static let base = """
        workers: 2
        retries: 1
        lease: 30s
        reports: out/reports
        quarantine: { threshold: 0.3, window: 14d }
        suite:
          command: "true"
          timeout: 20s
          env: { APP_ENV: test, TOKEN: "abc" }
          scenarios:
            - { id: login, tags: [smoke], timeout: 10s }
            - id: checkout
              name: "Check out"
              command: "test 1 = 1"
              env: { CARD: visa }
            - { id: "search results" }
        mock:
          mode: replay
          recordings: Recordings
          hosts: { api.test: "http://127.0.0.1:9" }
          match: [method, path, query, body, header:accept-language]
          ignore: { query: [cacheBuster], json: ["$.requestId"] }
          redact: { headers: [x-api-key], json: ["$.password"] }
          rewrite: true
          repeat: last
          stubs:
            - request: { method: GET, host: api.test, path: "/v1/slots/{day}", query: { lang: en } }
              response: { status: 200, json: { day: "{{request.params.day}}" }, template: true, delay: 10ms }
            - request: { path: /v1/pay }
              responses: [ { status: 500 }, { status: 200, body: paid } ]
        """

    /// What a mutation puts in place of a value, or inserts.
    static let hostile: [String] = [
        "-1", "0", "2147483648", "99999999999999999999", "99999999999999999999h", "1e309", "nan", "-0.5s", "0ms", "",
        "~", "null", "\"\\0\"", "\"a\\u0007b\"", "[", "{", "]", "}", "&a", "*a", "*nope", "!!binary aGVsbG8=",
        "!!float x",
        "true", "yes", "@", "'", "\"", "\\t", ":", "- ", "? x", "|", ">", String(repeating: "x", count: 5000),
        "ünïcödé ✓",
        "[1, 2, 3]", "{ a: b }", "15d", "4097", "101", "3651d", "0.0", "off",
    ]

    static let keys = [
        "workers", "retries", "lease", "reports", "suite", "mock", "quarantine", "id", "command", "timeout", "env",
        "unknown",
    ]

    /// 200 mutants, the same every run: values replaced, lines deleted, duplicated, swapped, re-indented or cut short,
    /// keys inserted, and an alias bomb.
    static let mutants: [(index: Int, text: String)] = {
        var random = SeededRandom(name: "orchestrate.yml")
        let lines = base.components(separatedBy: "\n")
        return (0..<200).map { index in
            var mutant = lines
            for _ in 0..<(1 + random.below(3)) {
                let at = random.below(mutant.count)
                switch random.below(8) {
                case 0:
                    // A value after a colon replaced.
                    if let colon = mutant[at].lastIndex(of: ":") {
                        mutant[at] = String(mutant[at][...colon]) + " " + hostile[random.below(hostile.count)]
                    }
                case 1: if mutant.count > 1 { mutant.remove(at: at) }
                case 2: mutant.insert(mutant[at], at: at)
                case 3: if at + 1 < mutant.count { mutant.swapAt(at, at + 1) }
                case 4: mutant[at] = String(repeating: " ", count: random.below(9)) + mutant[at].drop { $0 == " " }
                case 5:
                    mutant.insert("\(keys[random.below(keys.count)]): \(hostile[random.below(hostile.count)])", at: at)
                case 6:
                    let bomb = (1..<9).map { level in
                        "  b\(level): &b\(level) ["
                            + Array(repeating: "*b\(level - 1)", count: 9).joined(separator: ", ") + "]"
                    }
                    mutant.insert(contentsOf: ["bomb:", "  b0: &b0 [x, x, x, x, x, x, x, x, x]"] + bomb, at: 0)
                    if let stubs = mutant.firstIndex(where: { $0.contains("response: { status: 200, json:") }) {
                        mutant[stubs] = "      response: { status: 200, json: *b8 }"
                    }
                default:
                    let text = mutant.joined(separator: "\n")
                    mutant = String(text.prefix(random.below(text.count + 1))).components(separatedBy: "\n")
                }
            }
            return (index, mutant.joined(separator: "\n"))
        }
    }()

    /// The mutants in batches, which run side by side.
    static let batches: [[Int]] = stride(from: 0, to: mutants.count, by: 25).map {
        Array($0..<min($0 + 25, mutants.count))
    }

    @Test("every mutant of a real config is a valid run, or one line and exit 2", arguments: batches)
    func mutants(_ batch: [Int]) async throws {
        try await TemporaryDirectory.with { directory in
            let cli = OrchestrateCLI(
                directory: directory.path, database: try await TestPostgres.shared.makeDatabaseURL())
            for index in batch {
                let text = Self.mutants[index].text
                try directory.write("orchestrate.yml", text)
                // Capture files are made on the first byte: last mutant's must not stand in for this one's.
                for name in ["mutant.stdout", "mutant.stderr"] {
                    try? FileManager.default.removeItem(atPath: directory.file(name))
                }
                var command = SupervisedCommand(
                    executable: OrchestrateCLI.executable, arguments: ["run", "--progress", "none"],
                    environment: cli.environment,
                    workingDirectory: directory.path, stdoutPath: directory.file("mutant.stdout"),
                    stderrPath: directory.file("mutant.stderr")
                )
                command.timeout = .seconds(60)
                let reason = try await SupervisedProcess.run(command).reason
                let stdout = directory.read("mutant.stdout"), stderr = directory.read("mutant.stderr")
                let context = "mutant \(index):\n\(text)\n--- stdout:\n\(stdout)\n--- stderr:\n\(stderr)"
                switch reason {
                case .exited(0), .exited(1):
                    #expect(stdout.contains(" finished in "), "\(context)")
                case .exited(2):
                    let lines = stderr.split(separator: "\n")
                    #expect(lines.count == 1 && lines[0].hasPrefix("error: "), "not one line: \(context)")
                    // A config error names the file with the line and column of the problem.
                    if lines.first?.hasPrefix("error: orchestrate.yml") == true {
                        #expect(lines[0].contains(#/^error: orchestrate\.yml:\d+:\d+: /#), "no place: \(context)")
                    }
                default:
                    Issue.record("ended with \(reason): \(context)")
                }
            }
        }
    }
}

/// The inputs that used to get past the checks (a crash, or exit 3 after the work): refused up front, one line, exit 2.
@Suite("Bad input is refused up front")
struct BadInputTests {
    static let suite = "suite:\n  scenarios:\n    - { id: a, command: \"true\" }\n"

    /// `orchestrate ARGUMENTS` in a folder with `config` as orchestrate.yml: the exit code and stderr's lines.
    static func refuse(_ arguments: [String], config: String = suite) async throws -> (Int32?, [Substring]) {
        try await TemporaryDirectory.with { directory in
            try directory.write("orchestrate.yml", config)
            let cli = OrchestrateCLI(
                directory: directory.path, database: try await TestPostgres.shared.makeDatabaseURL())
            let result = try await cli.run(arguments)
            #expect(
                !FileManager.default.fileExists(atPath: directory.file(".orchestrate/runs")),
                "work started: \(result.stderr)")
            return (result.exitCode, result.stderr.split(separator: "\n"))
        }
    }

    static let flagCases: [([String], String)] = [
        (["run", "--retries", "2147483648"], "error: --retries must be from 0 to 100 (got 2147483648)"),
        (["run", "--workers", "100000"], "error: --workers must be from 1 to 4096 (got 100000)"),
        (["run", "--workers", "-1"], "error: --workers must be from 1 to 4096 (got -1)"),
        (
            ["run", "--junit", "/proc/nowhere/junit.xml"],
            "error: --junit /proc/nowhere/junit.xml: cannot make the folder /proc/nowhere"
        ),
        (
            ["run", "--reports", "/proc/reports"],
            "error: --reports /proc/reports: cannot make the folder /proc/reports"
        ),
    ]

    @Test("flags out of range and report paths that cannot be written", arguments: flagCases)
    func flags(_ arguments: [String], _ message: String) async throws {
        let (code, lines) = try await Self.refuse(arguments)
        #expect(code == 2 && lines.count == 1 && lines[0].hasPrefix(message), "\(lines)")
    }

    static let configCases: [(String, String)] = [
        ("lease: 99999999999999999999h\n" + suite, "error: orchestrate.yml:1:8: lease must be a positive duration"),
        ("retries: 2147483648\n" + suite, "error: orchestrate.yml:1:10: retries must be from 0 to 100"),
        ("workers: 0\n" + suite, "error: orchestrate.yml:1:10: workers must be from 1 to 4096"),
        (
            "suite:\n  scenarios:\n    - { id: \"a\\0b\", command: \"true\" }\n",
            "error: orchestrate.yml:3:13: id must not contain a NUL character"
        ),
        (
            "suite:\n  scenarios:\n    - { id: \"a\\u0007b\", command: \"true\" }\n",
            "error: orchestrate.yml:3:13: id must not contain control characters"
        ),
        ("suite:\n  command: \"true\"\n  scenarios: []\n", "error: orchestrate.yml:1:1: no scenarios"),
        (
            "mock:\n  stubs:\n    - request: { path: /x }\n      response:\n        json:\n"
                + "          l0: &l0 [a, a, a, a, a, a, a, a, a]\n"
                + (1..<10).map {
                    "          l\($0): &l\($0) [" + Array(repeating: "*l\($0 - 1)", count: 9).joined(separator: ", ")
                        + "]\n"
                }.joined()
                + suite,
            "error: orchestrate.yml:3:7: this value has more than 100000 parts"
        ),
    ]

    @Test("config values out of range, control characters in ids, and a YAML alias bomb", arguments: configCases)
    func config(_ config: String, _ message: String) async throws {
        let (code, lines) = try await Self.refuse(["run", "--progress", "none"], config: config)
        #expect(code == 2 && lines.count == 1 && lines[0].hasPrefix(message), "\(lines)")
    }

    @Test("a host that cannot hold the slots asked for says how many it can")
    func capacity() async throws {
        try await TemporaryDirectory.with { directory in
            try directory.write("orchestrate.yml", Self.suite)
            let cli = OrchestrateCLI(
                directory: directory.path, database: try await TestPostgres.shared.makeDatabaseURL())
            // 512 open files hold (512 - 256) / 16 = 16 slots.
            var command = SupervisedCommand(
                executable: "/bin/sh",
                arguments: ["-c", "ulimit -n 512 && exec \"$0\" run --workers 64", OrchestrateCLI.executable],
                environment: cli.environment, workingDirectory: directory.path, stdoutPath: directory.file("out.txt"),
                stderrPath: directory.file("err.txt"))
            command.timeout = .seconds(60)
            #expect(try await SupervisedProcess.run(command).reason == .exited(2))
            let lines = directory.read("err.txt").split(separator: "\n")
            #expect(
                lines.count == 1
                    && lines[0].contains(
                        "64 workers are more than this host can hold: at most 16 (open files allowed: 512")
                    && lines[0].contains("lower --workers"), "\(lines)")
        }
    }
}
