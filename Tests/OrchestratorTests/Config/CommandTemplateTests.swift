import Foundation
import OrchestrateModel
import OrchestrateTesting
import ProcessSupervisor
import Testing

/// A test's id is data, never code: whatever a runner lists, a template hands it to the command byte for byte and the
/// shell runs nothing else.
@Suite("Command templates: ids reach the command byte for byte, nothing else runs", .timeLimit(.minutes(3)))
struct CommandTemplateTests {
    /// Characters the shell and the templates treat specially, and some that are neither.
    static let alphabet =
        Array(#"{}$`'"\;|&<>()*?[]#~!= -_,./:^+@%"#) + Array("ab{id}{ids}{name}{ids-comma}{uri}{line}") + [
            "é", "字", "\t", "\u{301}",
        ]

    /// Ids that each break out of one quoting unless the template fills them as data.
    static let hostile = [
        "{name}; touch pwned #", "'; touch pwned; '", "\"; touch pwned; \"", "$(touch pwned)", "`touch pwned`",
        "\\'; touch pwned #", "{ids-comma}", "a'{id}'b", "${HOME:+$(touch pwned)}", ")$(touch pwned)(",
        // A combining mark after a quote, a backslash or a backtick makes one Character of the two; the shell still
        // reads the quote.
        "\"\u{301}; touch pwned; \"\u{301}", "'\u{301}; touch pwned; '\u{301}", "`\u{301}; touch pwned; `\u{301}",
        "\\\u{301}\"; touch pwned #", "$\u{301}(touch pwned)",
    ]

    static func randomIDs(_ count: Int, seed: String) -> [String] {
        var random = SeededRandom(name: seed)
        return hostile
            + (0..<count).map { _ in
                String((0..<(1 + random.below(24))).map { _ in alphabet[random.below(alphabet.count)] })
            }
    }

    /// What `sh -c command` passed to printf, one argument per NUL-ended field, run in `directory`.
    static func arguments(of command: String, in directory: TemporaryDirectory) async throws -> [String] {
        let output = directory.file("out")
        var run = SupervisedCommand.shell(
            command, environment: ["PATH": "/usr/bin:/bin", "OUT": output, "HOME": directory.path])
        run.workingDirectory = directory.path
        run.timeout = .seconds(20)
        unlink(output)
        let termination = try await SupervisedProcess.run(run)
        #expect(termination.reason == .exited(0), "\(command)")
        let bytes = FileManager.default.contents(atPath: output) ?? Data()
        return bytes.split(separator: 0, omittingEmptySubsequences: false).dropLast().map {
            String(decoding: $0, as: UTF8.self)
        }
    }

    @Test(
        "one id, outside quotes, inside '…', \"…\", $( ), backticks, a here-document, after a comment or a case pattern: the command gets it whole",
        arguments: [
            #"printf '%s\000' {id} > "$OUT""#, #"printf '%s\000' "{id}" > "$OUT""#, #"printf '%s\000' '{id}' > "$OUT""#,
            #"printf '%s\000' "$(printf '%s' {id})" > "$OUT""#, #"printf '%s\000' "$(printf '%s' "{id}")" > "$OUT""#,
            // A comment with an apostrophe, here-documents (expanded and not), backticks, a case pattern inside $( ).
            "# don't set anything up\n" + #"printf '%s\000' {id} > "$OUT""#,
            "cat <<EOF > \"$OUT.raw\"\n{id}\nEOF\n" + #"printf '%s\000' "$(cat "$OUT.raw")" > "$OUT""#,
            "cat <<'EOF' > \"$OUT.raw\"\n{id}\nEOF\n" + #"printf '%s\000' "$(cat "$OUT.raw")" > "$OUT""#,
            #"printf '%s\000' "`printf '%s' {id}`" > "$OUT""#, #"printf '%s\000' "`printf '%s' "{id}"`" > "$OUT""#,
            #"printf '%s\000' "$(case x in x) printf '%s' {id} ;; esac)" > "$OUT""#,
            // A combining mark after the template's own quote: still a quote to the shell.
            ": \"\u{301}\"; " + #"printf '%s\000' "{id}" > "$OUT""#,
        ])
    func single(template: String) async throws {
        try await TemporaryDirectory.with { directory in
            for id in Self.randomIDs(40, seed: template) {
                let command = CommandTemplate.fill(template, id: id, name: "n", uri: "u", line: 1)
                let received = try await Self.arguments(of: command, in: directory)
                #expect(received == [id], "\(template) with \(id) → \(command)")
            }
            #expect(!FileManager.default.fileExists(atPath: directory.file("pwned")), "an id ran as code")
        }
    }

    /// Templates whose own characters the shell reads in a way a reading by Characters, or one that starts a comment
    /// wherever a `#` follows a placeholder, gets wrong; and what the command prints for an id.
    static let templatesReadAsTheShellDoes: [(String, @Sendable (String) -> String)] = [
        // A `#` inside a word (after a placeholder, an escaped blank, a non-ASCII blank) starts no comment: the quote
        // after it is open on the next line.
        ("printf '%s\\000' {id}#'\n{id}' > \"$OUT\"", { $0 + "#\n" + $0 }),
        ("printf '%s\\000' a\\ #'\n{id}' > \"$OUT\"", { "a #\n" + $0 }),
        ("printf '%s\\000' a\u{A0}#'\n{id}' > \"$OUT\"", { "a\u{A0}#\n" + $0 }),
        // A combining mark after `case` makes another word: no case statement, no pattern to end.
        (": \"$(echo case\u{301} in x)\"; printf '%s\\000' {id} > \"$OUT\"", { $0 }),
        // A command substituted in an expanded here-document is read afresh.
        (
            "cat <<EOF > \"$OUT.raw\"\n$(printf %s {id})\nEOF\nprintf '%s\\000' \"$(cat \"$OUT.raw\")\" > \"$OUT\"",
            { $0 }
        ),
        (
            "cat <<EOF > \"$OUT.raw\"\n`printf %s {id}`\nEOF\nprintf '%s\\000' \"$(cat \"$OUT.raw\")\" > \"$OUT\"",
            { $0 }
        ),
    ]

    @Test(
        "a # inside a word, a mark after a keyword, a command inside a here-document: read as the shell reads them",
        arguments: 0..<templatesReadAsTheShellDoes.count)
    func readAsTheShellDoes(index: Int) async throws {
        let (template, expected) = Self.templatesReadAsTheShellDoes[index]
        try await TemporaryDirectory.with { directory in
            for id in Self.randomIDs(30, seed: template) {
                let command = CommandTemplate.fill(template, id: id, name: "n", uri: "u", line: 1)
                let received = try await Self.arguments(of: command, in: directory)
                #expect(received == [expected(id)], "\(template) with \(id) → \(command)")
            }
            #expect(!FileManager.default.fileExists(atPath: directory.file("pwned")), "an id ran as code")
        }
    }

    @Test(
        "a batch's ids: {ids} one word each, {ids-comma} and {ids-regex} one word, {name} of a pickle named like a placeholder"
    )
    func batch() async throws {
        try await TemporaryDirectory.with { directory in
            let ids = Self.randomIDs(30, seed: "batch")
            for chunk in stride(from: 0, to: ids.count, by: 5).map({ Array(ids[$0..<min($0 + 5, ids.count)]) }) {
                let words = Batch(command: #"printf '%s\000' {ids} > "$OUT""#, size: 10, milliseconds: 0).command(
                    for: chunk)
                let separate = try await Self.arguments(of: words, in: directory)
                #expect(separate == chunk, "\(words)")
                let comma = Batch(command: #"printf '%s\000' {ids-comma} > "$OUT""#, size: 10, milliseconds: 0).command(
                    for: chunk)
                let joined = try await Self.arguments(of: comma, in: directory)
                #expect(joined == [chunk.joined(separator: ",")], "\(comma)")
                let regex = Batch(command: #"printf '%s\000' "{ids-regex}" > "$OUT""#, size: 10, milliseconds: 0)
                    .command(for: chunk)
                let pattern = try await Self.arguments(of: regex, in: directory)
                #expect(pattern == ["^(\(chunk.map(Batch.regexEscaped).joined(separator: "|")))$"], "\(regex)")
            }
            let pickle = CommandTemplate.fill(
                #"printf '%s\000' {name} {id} > "$OUT""#, id: "f.feature: x", name: "harmless {name}; touch pwned #",
                uri: "f", line: 3)
            let named = try await Self.arguments(of: pickle, in: directory)
            #expect(named == ["harmless {name}; touch pwned #", "f.feature: x"])
            #expect(!FileManager.default.fileExists(atPath: directory.file("pwned")), "an id ran as code")
        }
    }

    @Test("each test's own command, the template read once for a suite: the shell gets that test's id, nothing runs")
    func eachOwnCommand() async throws {
        try await TemporaryDirectory.with { directory in
            let ids = Self.randomIDs(12, seed: "each")
            for template in [
                #"printf '%s\000' {ids} > "$OUT""#, #"printf '%s\000' "{ids-comma}" > "$OUT""#,
                "# {ids} isn't here\n" + #"printf '%s\000' "`printf '%s' {ids-comma}`" > "$OUT""#,
            ] {
                let batch = Batch(command: template, size: 10, milliseconds: 0)
                let commands = ids.map(batch.ownCommands())
                #expect(commands == ids.map { batch.command(for: [$0]) })
                for (id, command) in zip(ids, commands) {
                    let received = try await Self.arguments(of: command, in: directory)
                    #expect(received == [id], "\(command)")
                }
            }
            #expect(!FileManager.default.fileExists(atPath: directory.file("pwned")), "an id ran as code")
        }
    }

    @Test(
        "{ids-swift-testing}: exactly the batch's ids match, each followed by nothing or Swift Testing's /location",
        arguments: ["mixed", "ASCII", "CR LF"])
    func swiftTestingFilter(ids kind: String) throws {
        // Ids that share beginnings, ids that are the start of others, and hostile ones; ASCII ids are branched by
        // byte, others by character (CR LF is one character of two ASCII bytes).
        var ids = Self.randomIDs(60, seed: "filter") + ["M.S/f()", "M.S/f(_:)", "M.S/g()", "M.T/f()", "M.S/h", "M.S/f"]
        switch kind {
        case "ASCII": ids = ids.filter { $0.utf8.allSatisfy { $0 < 0x80 } }
        case "CR LF": ids = ["a\r\nb", "a\rc", "a\r", "a\n", "a\r\n", "b\r\n\r", "b\r"]
        default: #expect(ids.contains { !$0.utf8.allSatisfy { $0 < 0x80 } })
        }
        let batch = Array(ids.enumerated().filter { $0.offset % 2 == 0 }.map(\.element))
        let pattern = "^\(Batch.alternation(of: batch))(/|$)"
        let regex = try Regex(pattern)
        for id in Set(ids) {
            let wanted = batch.contains(id)
            #expect(((try? regex.firstMatch(in: id)) != nil) == wanted, "\(id.debugDescription) against \(pattern)")
            #expect(
                ((try? regex.firstMatch(in: id + "/M.swift:3:2")) != nil) == wanted, "\(id.debugDescription)/location")
            #expect((try? regex.firstMatch(in: id + "x")) == nil || batch.contains(id + "x"), "\(id.debugDescription)x")
        }
        // The command carries it as one shell word.
        let command = Batch(command: "run --filter {ids-swift-testing}", size: 10, milliseconds: 0).command(for: batch)
        #expect(command.hasPrefix("run --filter "))
    }

    @Test("a batch of every test the runner has is not named (Swift Testing's filter is dear), fewer are")
    func wholeSuite() {
        var batch = Batch(command: "run --filter {ids-swift-testing}", size: 10, milliseconds: 0)
        batch.whole = 3
        #expect(batch.command(for: ["M.S/a()", "M.S/b()", "M.S/c()"]) == "run --filter .")
        #expect(batch.command(for: ["M.S/a()", "M.S/b()"]) == "run --filter '^(?:M\\.S/(?:a\\(\\)|b\\(\\)))(/|$)'")
        #expect(batch.command(for: ["M.S/a()"]) == "run --filter '^(?:M\\.S/a\\(\\))(/|$)'")
    }

    @Test("a batch's ids fit one shell word: Swift Testing's shared beginnings hold hundreds, a flat list fewer")
    func largestSize() {
        let ids = (0..<900).map { "GraphQLTests.SomeLongSuiteName\($0 % 9)Tests/aTestWithAFairlyLongName\($0)()" }
        let swiftTesting = Batch(command: "run --filter {ids-swift-testing}", size: 10_000, milliseconds: 0)
        #expect(swiftTesting.largestSize(of: ids, bytes: 115_000) == 900)
        let comma = Batch(command: "run {ids-comma}", size: 10_000, milliseconds: 0)
        #expect(comma.largestSize(of: ids, bytes: 115_000) == 115_000 / (ids.map(\.utf8.count).max()! + 8))
        #expect(swiftTesting.largestSize(of: ids, bytes: 2_000) < 900)
    }

    @Test("what is not a placeholder stays: ${HOME}, {a,b}, an unclosed brace, an escaped one, one in a comment")
    func notPlaceholders() {
        #expect(
            CommandTemplate.fill("echo ${HOME} {a,b} {id", id: "x", name: "n", uri: "u", line: 1)
                == "echo ${HOME} {a,b} {id")
        #expect(CommandTemplate.fill(#"echo \{id} {line}"#, id: "x", name: "n", uri: "u", line: 7) == #"echo \{id} 7"#)
        #expect(CommandTemplate.fill("true # {id}", id: "x y", name: "n", uri: "u", line: 1) == "true # {id}")
    }
}
