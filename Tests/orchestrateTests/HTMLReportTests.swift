import Foundation
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
            let cli = OrchestrateCLI(directory: directory.path, database: try await TestPostgres.shared.makeDatabaseURL())
            let run = try await cli.run(["run", "--mode", "live", "--progress", "none"])
            #expect(run.exitCode == 1, "\(run.stdout)\(run.stderr)")
            let report = try #require(run.stdout.split(separator: "\n").first { $0.hasPrefix("report: ") }.map { String($0.dropFirst(8)) })
            let html = try String(contentsOfFile: report, encoding: .utf8)
            #expect(html.contains(#"<meta http-equiv="Content-Security-Policy" content="default-src &apos;none&apos;"#), "\(html.prefix(600))")
            #expect(!html.contains("<script") && !html.contains("<img") && !html.contains("<b>evil"))
            #expect(html.contains("&lt;script&gt;document.title=&apos;pwned&apos;&lt;/script&gt;"))

            let dom = try Chromium.dumpDOM(report, profile: directory.file("chromium"))
            #expect(dom.contains("<title>orchestrate run "), "no script changed the title: \(dom.prefix(400))")
            #expect(!dom.contains("pwned</title>") && !dom.contains("pwned by img</title>"))
            #expect(!dom.contains("<script") && !dom.contains("<img"), "no element came from the payload")
            #expect(dom.contains("&lt;script&gt;document.title='pwned'&lt;/script&gt;"), "the payload is text on the page")
            #expect(dom.contains("&lt;b&gt;evil&lt;/b&gt; scenario"))
            #expect(dom.contains("POST http://127.0.0.1:\(upstream.port)/v1/echo"), "the exchange is under the attempt")
        }
        await upstream.stop()
    }
}

/// Headless Chromium (`make test` installs it): the DOM of a page after it loaded and ran whatever it may run.
enum Chromium {
    static func dumpDOM(_ path: String, profile: String) throws -> String {
        let candidates = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"]
        let browser = try #require(
            candidates.first { FileManager.default.isExecutableFile(atPath: $0) }, "no Chromium: make test installs it (apt-get install chromium)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
        process.arguments = [
            "--kill-after=5", "60", browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
            "--user-data-dir=\(profile)", "--virtual-time-budget=2000", "--dump-dom", URL(fileURLWithPath: path).absoluteString,
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let dom = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "chromium exited with \(process.terminationStatus)")
        return dom
    }
}
