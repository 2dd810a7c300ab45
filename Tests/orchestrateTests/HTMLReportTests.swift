import Foundation
import OrchestrateModel
import OrchestrateTesting
import Testing

@Suite("The HTML report")
struct HTMLReportTests {
    static let payload = #"<script>document.title='pwned'</script><img src=x onerror="document.title='pwned by img'">"#

    @Test("opened in headless Chromium, a recorded XSS payload shows as text and runs no script")
    func xssPayloadIsText() async throws {
        let upstream = try await TestUpstream.start()
        try await TemporaryDirectory.with { directory in
            try directory.write("payload.txt", Self.payload)
            // The upstream echoes the request body back: the payload is in the request and in the response.
            try directory.write(
                "orchestrate.yml",
                """
                workers: 1
                suite:
                  scenarios:
                    - id: "<b>evil</b> scenario"
                      command: "curl -s -X POST -H 'content-type: text/html' --data-binary @payload.txt $ORCHESTRATE_MOCK_URL/evil.test/v1/echo; exit 1"
                mock:
                  hosts: { evil.test: "\(upstream.url)" }
                """)
            let cli = OrchestrateCLI(
                directory: directory.path, database: try await TestPostgres.shared.makeDatabaseURL())
            let run = try await cli.run(["run", "--mode", "live", "--progress", "none"])
            #expect(run.exitCode == 1, "\(run.stdout)\(run.stderr)")
            let report = try #require(
                run.stdout.split(separator: "\n").first { $0.hasPrefix("report: ") }.map { String($0.dropFirst(8)) })
            let html = try String(contentsOfFile: report, encoding: .utf8)
            #expect(
                html.contains(#"<meta http-equiv="Content-Security-Policy" content="default-src &apos;none&apos;"#),
                "\(html.prefix(600))")
            #expect(!html.contains("<script") && !html.contains("<img") && !html.contains("<b>evil"))
            #expect(html.contains("&lt;script&gt;document.title=&apos;pwned&apos;&lt;/script&gt;"))

            let dom = try await Chromium.dumpDOM(report, profile: directory.file("chromium"))
            #expect(dom.contains("<title>orchestrate run "), "no script changed the title: \(dom.prefix(400))")
            #expect(!dom.contains("pwned</title>") && !dom.contains("pwned by img</title>"))
            #expect(!dom.contains("<script") && !dom.contains("<img"), "no element came from the payload")
            #expect(
                dom.contains("&lt;script&gt;document.title='pwned'&lt;/script&gt;"), "the payload is text on the page")
            #expect(dom.contains("&lt;b&gt;evil&lt;/b&gt; scenario"))
            #expect(dom.contains("POST http://127.0.0.1:\(upstream.port)/v1/echo"), "the exchange is under the attempt")
        }
        await upstream.stop()
    }
}

extension HTMLReportTests {
    @Test("in headless Chromium the timeline draws a bar per attempt and a line per retry; a screenshot shows it")
    func timelineInChromium() async throws {
        try await TemporaryDirectory.with { directory in
            try directory.write(
                "orchestrate.yml",
                """
                workers: 3
                retries: 1
                suite:
                  scenarios:
                    - { id: slow, command: "sleep 0.6" }
                    - { id: flaky, command: "sleep 0.2; test \\"$ORCHESTRATE_ATTEMPT\\" = 2" }
                    - { id: a, command: "sleep 0.1" }
                    - { id: b, command: "sleep 0.2" }
                    - { id: c, command: "sleep 0.1" }
                """)
            let database = try await TestPostgres.shared.makeDatabaseURL()
            let cli = OrchestrateCLI(directory: directory.path, database: database)
            let run = try await cli.run(["run", "--progress", "none"])
            #expect(run.exitCode == 0, "\(run.stdout)\(run.stderr)")
            let report = try #require(
                run.stdout.split(separator: "\n").first { $0.hasPrefix("report: ") }.map { String($0.dropFirst(8)) })
            let attempts = try await queryRows(
                database, "SELECT count(*) FROM attempts WHERE state = 'finished'", as: Int.self)
            #expect(attempts == [6], "five scenarios, one retry")
            let dom = try await Chromium.dumpDOM(report, profile: directory.file("chromium"))
            #expect(
                dom.components(separatedBy: "<rect class=\"bar ").count - 1 == 6,
                "a bar per attempt: \(dom.prefix(2000))")
            #expect(dom.components(separatedBy: "<line class=\"retry\"").count - 1 == 1)
            #expect(dom.components(separatedBy: "<text class=\"lane\"").count - 1 == 3, "a lane per slot")
            let png = try await Chromium.screenshot(
                report, to: directory.file("timeline.png"), profile: directory.file("chromium"))
            #expect(png.count > 10_000 && png.starts(with: [0x89, 0x50, 0x4E, 0x47]), "a PNG of the page")
        }
    }
}

/// Headless Chromium (`make test` installs it): the DOM of a page after it loaded and ran whatever it may run.
enum Chromium {
    /// A PNG of the page's first 1280 × 900 pixels, written to `output` and returned.
    static func screenshot(_ path: String, to output: String, profile: String) async throws -> Data {
        _ = try await run(
            [
                "--screenshot=\(output)", "--window-size=1280,900", "--hide-scrollbars",
                URL(fileURLWithPath: path).absoluteString,
            ], profile: profile)
        return try Data(contentsOf: URL(fileURLWithPath: output))
    }

    static func dumpDOM(_ path: String, profile: String) async throws -> String {
        try await run(["--dump-dom", URL(fileURLWithPath: path).absoluteString], profile: profile)
    }

    /// Chromium headless with `arguments`, its standard output; waited for on a thread of its own.
    private static func run(_ arguments: [String], profile: String) async throws -> String {
        try await blockingOffPool { try blockingRun(arguments, profile: profile) }
    }

    /// Chromium headless with `arguments`, its standard output.
    private static func blockingRun(_ arguments: [String], profile: String) throws -> String {
        let candidates = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"]
        let browser = try #require(
            candidates.first { FileManager.default.isExecutableFile(atPath: $0) },
            "no Chromium: make test installs it (apt-get install chromium)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
        process.arguments =
            [
                "--kill-after=5", "60", browser, "--headless", "--no-sandbox", "--disable-gpu",
                "--disable-dev-shm-usage", "--no-first-run",
                "--user-data-dir=\(profile)", "--virtual-time-budget=2000",
            ] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "chromium exited with \(process.terminationStatus)")
        return text
    }
}

extension HTMLReportTests {
    @Test(
        "a scenario's trend is its attempts before the run, then the run's own in the order they finished; a later run's report of an earlier run stops at that run"
    )
    func trendAcrossRuns() async throws {
        try await TemporaryDirectory.with { directory in
            try directory.write(
                "orchestrate.yml",
                """
                workers: 1
                retries: 1
                suite:
                  scenarios:
                    - { id: turns, command: "test -e fail-once && rm fail-once && exit 1; exit 0" }
                """)
            let cli = OrchestrateCLI(
                directory: directory.path, database: try await TestPostgres.shared.makeDatabaseURL())
            func trend(_ stdout: String) throws -> String {
                let report = try #require(
                    stdout.split(separator: "\n").first { $0.hasPrefix("report: ") }.map { String($0.dropFirst(8)) })
                let html = try String(contentsOfFile: report, encoding: .utf8)
                return try #require(
                    html.firstRange(of: #/<title>last \d+ attempts: \d+ passed</title>/#).map { String(html[$0]) })
            }
            let first = try await cli.run(["run", "--progress", "none"])
            #expect(first.exitCode == 0, "\(first.stdout)\(first.stderr)")
            #expect(try trend(first.stdout) == "<title>last 1 attempts: 1 passed</title>")
            // A failed attempt, then its retry's pass: both join the trend, in order.
            try directory.write("fail-once", "")
            let second = try await cli.run(["run", "--progress", "none"])
            #expect(second.exitCode == 0, "\(second.stdout)\(second.stderr)")
            #expect(try trend(second.stdout) == "<title>last 3 attempts: 2 passed</title>")
            let third = try await cli.run(["run", "--progress", "none"])
            #expect(try trend(third.stdout) == "<title>last 4 attempts: 3 passed</title>")
            // The first run's report, written again after the others: its trend is what came before it and itself.
            let runID = try #require(
                first.stdout.split(separator: "\n").first { $0.hasPrefix("report: ") }
                    .map { URL(fileURLWithPath: String($0.dropFirst(8))).deletingLastPathComponent().lastPathComponent }
            )
            let again = try await cli.run(["report", runID, "--html", directory.file("again.html")])
            #expect(again.exitCode == 0, "\(again.stdout)\(again.stderr)")
            let html = try String(contentsOfFile: directory.file("again.html"), encoding: .utf8)
            #expect(html.contains("<title>last 1 attempts: 1 passed</title>"))
        }
    }
}
