import Foundation
import OrchestrateTesting
import Orchestrator
import Testing

/// What a run tells a CI system: GitHub's workflow commands and job summary, and the same Markdown anywhere. Test ids
/// are data there too: a name made of Markdown, HTML or workflow-command syntax is printed as the text it is.
@Suite("CI surfaces: annotations and the Markdown summary", .timeLimit(.minutes(3)))
struct CISurfacesTests {
    /// Ids a listing might print, each made of what would do something if read as Markdown, HTML or a command.
    static let hostile = [
        "cart|total", "<script>alert(1)</script>", "[pay](javascript:alert(1))", "![i](http://example.test/x.png)",
        "**bold** _em_ `code`", "a::error::forged", "semi,colon:value", "100% done",
    ]

    /// GitHub's parsing of a workflow command line, as its runner reads `::name k=v,k=v::message` and unescapes the
    /// values (`%25` `%0D` `%0A`, and in properties `%3A` `%2C`): the command, its properties and its message.
    static func parse(_ line: String) -> (name: String, properties: [String: String], message: String)? {
        guard line.hasPrefix("::"),
            let end = line.range(of: "::", range: line.index(line.startIndex, offsetBy: 2)..<line.endIndex)
        else { return nil }
        let head = line[line.index(line.startIndex, offsetBy: 2)..<end.lowerBound]
        let name = String(head.prefix { $0 != " " })
        func unescape(_ text: Substring, property: Bool) -> String {
            var text = String(text).replacingOccurrences(of: "%0D", with: "\r").replacingOccurrences(
                of: "%0A", with: "\n")
            if property {
                text = text.replacingOccurrences(of: "%3A", with: ":").replacingOccurrences(of: "%2C", with: ",")
            }
            return text.replacingOccurrences(of: "%25", with: "%")
        }
        var properties: [String: String] = [:]
        for pair in head.dropFirst(name.count).split(separator: ",")
        where !pair.trimmingCharacters(in: .whitespaces).isEmpty {
            let parts = pair.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            guard parts.count == 2 else { return nil }
            properties[String(parts[0])] = unescape(parts[1], property: true)
        }
        return (name, properties, unescape(line[end.upperBound...], property: false))
    }

    @Test("escaping follows GitHub's toolkit: a value never ends its command early or starts another")
    func escaping() {
        for value in Self.hostile + ["line\nbreak::error::x", "cr\rlf", "%0A stays %0A", "::"] {
            let command =
                "::error file=\(GitHubAnnotations.escapeProperty(value)),title=\(GitHubAnnotations.escapeProperty(value))::"
                + GitHubAnnotations.escapeData(value)
            #expect(!command.contains("\n") && !command.contains("\r"))
            let parsed = Self.parse(command)
            #expect(parsed?.name == "error" && parsed?.properties == ["file": value, "title": value], "\(command)")
            #expect(parsed?.message == value, "\(command)")
        }
    }

    /// Renders Markdown as GitHub's CommonMark does (markdown-it-py, CommonMark with tables, raw HTML allowed so that any
    /// that got through would show) and says what came out: the tags used, the links' targets, the table cells.
    static let render = """
        import json, sys
        from html.parser import HTMLParser
        from markdown_it import MarkdownIt
        html = MarkdownIt("commonmark", {"html": True}).enable("table").render(open(sys.argv[1]).read())
        class Cells(HTMLParser):
            def __init__(self):
                super().__init__(); self.tags = set(); self.links = []; self.cells = []; self.cell = None
            def handle_starttag(self, tag, attrs):
                self.tags.add(tag)
                if tag == "a": self.links.append(dict(attrs).get("href"))
                if tag in ("td", "th"): self.cell = ""
            def handle_endtag(self, tag):
                if tag in ("td", "th"): self.cells.append(self.cell); self.cell = None
            def handle_data(self, data):
                if self.cell is not None: self.cell += data
        parser = Cells(); parser.feed(html)
        print(json.dumps({"tags": sorted(parser.tags), "links": parser.links, "cells": parser.cells}))
        """

    @Test(
        "on GitHub Actions: an error per failing test at its place, a warning per flaky one, and a job summary that CommonMark renders as text"
    )
    func github() async throws {
        try await TemporaryDirectory.with { directory in
            try directory.write("ids.txt", Self.hostile.joined(separator: "\n") + "\nsteady\nwobbly\n")
            try directory.write(
                "orchestrate.yml",
                """
                workers: 2
                retries: 1
                suite:
                  list: "cat ids.txt"
                  command: "case {id} in steady) exit 0;; wobbly) test \\"$ORCHESTRATE_ATTEMPT\\" = 2;; *) echo broken; exit 1;; esac"
                """)
            var cli = OrchestrateCLI(
                directory: directory.path, database: try await TestPostgres.shared.makeDatabaseURL())
            cli.environment["GITHUB_ACTIONS"] = "true"
            cli.environment["GITHUB_STEP_SUMMARY"] = directory.file("step-summary.md")
            cli.environment["GITHUB_SERVER_URL"] = "https://github.example.test"
            cli.environment["GITHUB_REPOSITORY"] = "shop/app"
            cli.environment["GITHUB_RUN_ID"] = "42"
            try directory.write("step-summary.md", "# an earlier step's summary\n")
            let run = try await cli.run(["run", "--progress", "none", "--summary", "summary.md"])
            #expect(run.exitCode == 1, "\(run.stdout)\(run.stderr)")

            // Workflow commands: one per test that needs a look, each title naming its test whole.
            // Commands are stopped from the run's first line under a token; resumed only for the run's own annotations,
            // stopped again under another around the summary (with what came from outside), and resumed at the end.
            let lines = run.stdout.split(separator: "\n").map(String.init)
            let first = try #require(lines.first.flatMap(Self.parse), "\(run.stdout)")
            #expect(first.name == "stop-commands" && first.message.count == 36, "\(lines[0])")
            let resumed = try #require(lines.firstIndex(of: "::\(first.message)::"), "\(run.stdout)")
            let stopped = try #require(
                lines.indices.first { $0 > resumed && lines[$0].hasPrefix("::stop-commands::") }, "\(run.stdout)")
            let again = String(lines[stopped].dropFirst("::stop-commands::".count))
            #expect(again != first.message && lines.last == "::\(again)::", "\(run.stdout)")
            #expect(
                lines[1..<resumed].allSatisfy { !$0.hasPrefix("::") }
                    && lines[(stopped + 1)..<(lines.count - 1)].allSatisfy { !$0.hasPrefix("::") }, "\(run.stdout)")
            let commands = Array(lines[(resumed + 1)..<stopped])
            let parsed = commands.compactMap(Self.parse)
            #expect(parsed.count == commands.count && commands.count == Self.hostile.count + 1, "\(run.stdout)")
            let errors = Set(parsed.filter { $0.name == "error" }.compactMap { $0.properties["title"] })
            #expect(errors == Set(Self.hostile.map { "\($0) failed" }), "\(errors)")
            #expect(parsed.filter { $0.name == "warning" }.map { $0.properties["title"] } == ["wobbly is flaky"])
            #expect(parsed.allSatisfy { $0.message.contains("exited with status 1") }, "\(parsed.map(\.message))")

            // The job summary: appended after the earlier step's, the same Markdown as --summary.
            let step = directory.read("step-summary.md")
            let summary = directory.read("summary.md")
            #expect(step == "# an earlier step's summary\n" + summary, "\(step)")
            #expect(summary.hasPrefix("## orchestrate: 1 passed, 1 flaky, \(Self.hostile.count) failed of "))
            let rendered = try #require(
                try await Python.lines(
                    script: Self.render, arguments: [directory.file("summary.md")],
                    hint: "markdown-it-py (make test installs it)"
                ).first)
            let output = try #require(try JSONSerialization.jsonObject(with: Data(rendered.utf8)) as? [String: Any])
            let tags = Set(output["tags"] as? [String] ?? [])
            #expect(
                tags.isSubset(of: ["h2", "h3", "p", "table", "thead", "tbody", "tr", "th", "td", "strong", "a"]),
                "\(tags)")
            #expect(
                output["links"] as? [String] == ["https://github.example.test/shop/app/actions/runs/42"], "\(output)")
            let cells = output["cells"] as? [String] ?? []
            for id in Self.hostile {
                #expect(cells.contains(id) || cells.contains("\(id) new"), "\(id) as text in a cell: \(cells)")
            }
        }
    }
}
