import Foundation
import OrchestrateTesting
import Testing

/// `--help` reads as ArgumentParser lays it out for the terminal: paragraphs wrap at the terminal's width (no line
/// breaks of ours inside them), and every usage line fits 80 columns.
@Suite("--help wraps as the terminal does", .timeLimit(.minutes(3)))
struct HelpTests {
    static let commands = [
        [], ["run"], ["agent"], ["report"], ["artifacts"], ["scenarios"], ["runs"], ["history"], ["flaky"], ["logs"],
        ["quarantine"], ["mock"], ["mock", "serve"], ["gherkin"], ["gherkin", "pickles"], ["db"],
    ]

    static func help(_ command: [String], columns: Int, in directory: TemporaryDirectory) async throws -> [Substring] {
        var cli = OrchestrateCLI(directory: directory.path, database: nil)
        cli.environment["COLUMNS"] = "\(columns)"
        let result = try await cli.run(command + ["--help"], name: command.joined(separator: "-"))
        #expect(result.exitCode == 0, "\(command): \(result.stderr)")
        return result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
    }

    @Test("every usage line fits 80 columns", arguments: commands)
    func usage(_ command: [String]) async throws {
        try await TemporaryDirectory.with { directory in
            let usage = try await Self.help(command, columns: 80, in: directory).filter { $0.hasPrefix("USAGE:") }
            #expect(usage.count == 1 && usage.allSatisfy { $0.count <= 80 }, "\(command): \(usage)")
        }
    }

    @Test("on a wide terminal every paragraph, and every option's help, is one line", arguments: commands)
    func paragraphs(_ command: [String]) async throws {
        try await TemporaryDirectory.with { directory in
            let lines = try await Self.help(command, columns: 1000, in: directory)
            let overview = lines.prefix { !$0.hasPrefix("USAGE:") }
            for (line, next) in zip(overview, overview.dropFirst()) where !line.isEmpty {
                #expect(next.isEmpty, "\(command): a paragraph broken after \"\(line)\"")
            }
            // A help text on a line of its own follows an option whose name left it no room, never a line of help.
            for (previous, line) in zip(lines, lines.dropFirst())
            where line.hasPrefix(String(repeating: " ", count: 20)) {
                let head = previous.drop { $0 == " " }
                #expect(head.hasPrefix("-") && !head.contains("  "), "\(command): help broken after \"\(previous)\"")
            }
        }
    }
}
