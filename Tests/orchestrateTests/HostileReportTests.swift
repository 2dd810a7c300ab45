import Foundation
import OrchestrateTesting
import Testing

/// A runner's report is read off the threads that serve the slots, and within bounds: a hostile one never stalls
/// another slot's mock server. docs/reliability.md names this test.
@Suite("Hostile reports: bounded, and read where no other slot waits on them", .timeLimit(.minutes(4)))
struct HostileReportTests {
    /// `hostile.py ID`, by the name after `suite.` (without its number): `bomb` writes a JUnit report of 160,000
    /// references to a 100 KB entity (0.5 MB that expands to 16 GB); `heavy` a valid report of 300,000 tests (35 MB)
    /// whose last names this test as failed; `probe` asks its mock server's health endpoint over and over until `done`
    /// exists, and fails when an answer took 5 s or more; `after` makes `done`.
    static let script = #"""
        import os, re, sys, time, urllib.request
        name = sys.argv[1].split(".", 1)[1]
        mode = re.sub(r"[0-9]+$", "", name)
        out = os.path.join(os.environ["ORCHESTRATE_ARTIFACTS_DIR"], "junit.xml")
        def junit(cases):
            open(out, "w").write('<testsuites><testsuite name="s">\n%s</testsuite></testsuites>\n' % cases)
        if mode == "bomb":
            open(out, "w").write('<?xml version="1.0"?>\n<!DOCTYPE t [<!ENTITY e "%s">]>\n<testsuites><testsuite name="s">'
                '<testcase classname="suite" name="%s"><failure>%s</failure></testcase></testsuite></testsuites>\n'
                % ("x" * 100_000, name, "&e;" * 160_000))
        elif mode == "heavy":
            cases = "".join('<testcase classname="suite.other" name="t%d" time="0.001"/>\n' % i for i in range(300_000))
            junit(cases + '<testcase classname="suite" name="%s"><failure message="read to its end"/></testcase>\n' % name)
        elif mode == "probe":
            url, worst, deadline = os.environ["ORCHESTRATE_CONTROL_URL"] + "/health", 0.0, time.time() + 150
            while not os.path.exists("done") and time.time() < deadline:
                start = time.time()
                urllib.request.urlopen(url, timeout=120).read()
                worst = max(worst, time.time() - start)
                time.sleep(0.02)
            stalled = worst >= 5 or not os.path.exists("done")
            junit('<testcase classname="suite" name="%s">%s</testcase>\n'
                % (name, '<failure message="the mock server stalled for %.1f s"/>' % worst if stalled else ""))
        else:
            open("done", "w").close()
            junit('<testcase classname="suite" name="%s"/>\n' % name)
        """#

    @Test(
        "an entity bomb is refused at once; huge valid reports in every other slot are read while a slot's mock server answers within 5 s",
        arguments: ["bomb", "heavy"])
    func hostileReports(mode: String) async throws {
        try await TemporaryDirectory.with { directory in
            // As many hostile reports as Swift's cooperative pool has threads, and a slot that probes its mock server.
            let width = ProcessInfo.processInfo.activeProcessorCount
            let ids = (1...width).map { "suite.\(mode)\($0)" } + ["suite.probe", "suite.after"]
            try directory.write("suite/hostile.py", Self.script)
            try directory.write("suite/ids", ids.joined(separator: "\n") + "\n")
            try directory.write(
                "suite/orchestrate.yml",
                """
                workers: \(width + 1)
                suite:
                  list: "cat ids"
                  command: "python3 hostile.py {id}"
                  results: junit
                """)
            let cli = OrchestrateCLI(
                directory: directory.file("suite"), database: try await TestPostgres.shared.makeDatabaseURL())
            let run = try await cli.run(["run", "--progress", "none"])
            #expect(run.exitCode == 1, "\(run.stdout)\(run.stderr)")
            #expect(
                run.stdout.contains("\(width + 2) scenarios, 2 passed, \(width) failed"),
                "the probe passed: \(run.stdout)")
            let runID = try #require(run.stdout.split(separator: " ").dropFirst().first.map(String.init))
            let hostile = try await cli.run(["logs", runID, "suite.\(mode)1"])
            #expect(
                hostile.stdout.contains(
                    mode == "bomb"
                        ? "it declares entities of its own (a DOCTYPE with an internal subset)" : "read to its end"),
                "\(hostile.stdout)")
        }
    }
}
