import Foundation
import OrchestrateModel
import OrchestrateTesting
import Testing

/// A test passes only with evidence: its runner's report names it as passed and its process's end stands behind the
/// report. docs/reliability.md names these tests.
@Suite("No pass without evidence", .timeLimit(.minutes(5)))
struct EvidenceTests {
    /// Writes a report of `REPORT_FORMAT` into the artifacts folder and exits `REPORT_EXIT`: `REPORT_MODE` `elsewhere`
    /// names only a test nobody asked for; `passed` names every id it was given as passed.
    static let script = #"""
        import json, os, sys
        fmt, mode, code = os.environ["REPORT_FORMAT"], os.environ["REPORT_MODE"], int(os.environ["REPORT_EXIT"])
        tests = [("elsewhere", "zzz")] if mode == "elsewhere" else [tuple(i.rsplit(".", 1)) for i in sys.argv[1:]]
        out = os.environ["ORCHESTRATE_ARTIFACTS_DIR"]
        if fmt == "junit":
            cases = "".join('<testcase classname="%s" name="%s" time="0.01"/>' % t for t in tests)
            open(os.path.join(out, "junit.xml"), "w").write("<testsuites><testsuite name='s'>%s</testsuite></testsuites>" % cases)
        elif fmt == "cucumber-json":
            features = [{"uri": c, "elements": [{"type": "scenario", "name": n, "steps": [
                {"keyword": "Given ", "name": "x", "result": {"status": "passed", "duration": 1000}}]}]} for c, n in tests]
            json.dump(features, open(os.path.join(out, "cucumber.json"), "w"))
        else:
            lines = []
            for i, (c, n) in enumerate(tests):
                lines += [{"pickle": {"id": "p%d" % i, "uri": c, "name": n, "steps": []}},
                          {"testCase": {"id": "c%d" % i, "pickleId": "p%d" % i, "testSteps": []}},
                          {"testCaseStarted": {"id": "r%d" % i, "testCaseId": "c%d" % i, "attempt": 0, "timestamp": {"seconds": 1, "nanos": 0}}},
                          {"testStepFinished": {"testCaseStartedId": "r%d" % i, "testStepId": "s", "testStepResult": {"status": "PASSED"}}},
                          {"testCaseFinished": {"testCaseStartedId": "r%d" % i, "timestamp": {"seconds": 2, "nanos": 0}, "willBeRetried": False}}]
            open(os.path.join(out, "messages.ndjson"), "w").write("".join(json.dumps(l) + "\n" for l in lines))
        sys.exit(code)
        """#

    static func configure(
        _ directory: TemporaryDirectory, format: ResultsFormat, template: String, mode: String, exit: Int
    ) throws {
        try directory.write("suite/report.py", script)
        try directory.write(
            "suite/orchestrate.yml",
            """
            workers: 2
            suite:
              list: "printf 'suite.t1\\\\nsuite.t2\\\\nsuite.t3\\\\n'"
              command: "python3 report.py \(template)"
              results: \(format.rawValue)
              env: { REPORT_FORMAT: \(format.rawValue), REPORT_MODE: \(mode), REPORT_EXIT: "\(exit)" }
            """)
    }

    @Test(
        "a report that names none of the tests asked for, or passes with a process that exits 1: no test passes, alone or in a batch",
        arguments: ResultsFormat.configurable)
    func noEvidence(format: ResultsFormat) async throws {
        try await TemporaryDirectory.with { directory in
            let cli = OrchestrateCLI(
                directory: directory.file("suite"), database: try await TestPostgres.shared.makeDatabaseURL())
            for template in ["{id}", "{ids}"] {
                for (mode, exit, said) in [
                    ("elsewhere", 0, "its runner reported no result for suite.t1"),
                    ("passed", 1, "its report says it passed, but its process did not end well"),
                ] {
                    try Self.configure(directory, format: format, template: template, mode: mode, exit: exit)
                    let run = try await cli.run(["run", "--progress", "none"])
                    #expect(run.exitCode == 1, "\(template) \(mode): \(run.stdout)\(run.stderr)")
                    #expect(
                        run.stdout.contains("3 scenarios, 0 passed, 3 failed"), "\(template) \(mode): \(run.stdout)")
                    let runID = try #require(run.stdout.split(separator: " ").dropFirst().first.map(String.init))
                    let logs = try await cli.run(["logs", runID, "suite.t1"])
                    #expect(logs.stdout.contains(said), "\(template) \(mode): \(logs.stdout)")
                }
            }
            // The same runner with evidence: every test passes, in a batch.
            try Self.configure(directory, format: format, template: "{ids}", mode: "passed", exit: 0)
            let run = try await cli.run(["run", "--progress", "none"])
            #expect(
                run.exitCode == 0 && run.stdout.contains("3 scenarios, 3 passed, 0 failed"),
                "\(run.stdout)\(run.stderr)")
        }
    }

    @Test(
        "a report left for the next attempt — in a folder put in place of the artifacts folder, behind a link, a hard link — passes nothing"
    )
    func leftBehind() async throws {
        try await TemporaryDirectory.with { directory in
            let names = ["t1", "t2", "t3"].map { #"<testcase classname="suite" name="\#($0)"/>"# }.joined()
            try directory.write("outside.xml", "<testsuites><testsuite name='s'>\(names)</testsuite></testsuites>")
            // One slot: t1 runs first (all are new, in listed order), writes its report, and puts a new artifacts
            // folder in place of the slot's with a report that says t2 and t3 passed too. t2 and t3 run nothing.
            try directory.write(
                "suite/plant.sh",
                """
                A="$ORCHESTRATE_ARTIFACTS_DIR"
                case "$1" in
                  suite.t1) rm -rf "$A" && mkdir "$A" && cp \(directory.file("outside.xml")) "$A/junit.xml" ;;
                  suite.t2) [ -n "$LINKS" ] && ln -s \(directory.file("outside.xml")) "$A/junit.xml" ;;
                  suite.t3) [ -n "$LINKS" ] && ln \(directory.file("outside.xml")) "$A/junit.xml" ;;
                esac
                exit 0
                """)
            for links in ["", "1"] {
                try directory.write(
                    "suite/orchestrate.yml",
                    """
                    workers: 1
                    suite:
                      list: "printf 'suite.t1\\\\nsuite.t2\\\\nsuite.t3\\\\n'"
                      command: "sh plant.sh {id}"
                      results: junit
                      env: { LINKS: "\(links)" }
                    """)
                let cli = OrchestrateCLI(
                    directory: directory.file("suite"), database: try await TestPostgres.shared.makeDatabaseURL())
                let run = try await cli.run(["run", "--progress", "none"])
                #expect(run.exitCode == 1, "\(run.stdout)\(run.stderr)")
                #expect(run.stdout.contains("3 scenarios, 1 passed, 2 failed"), "\(run.stdout)")
                let runID = try #require(run.stdout.split(separator: " ").dropFirst().first.map(String.init))
                let second = try await cli.run(["logs", runID, "suite.t2"])
                let third = try await cli.run(["logs", runID, "suite.t3"])
                if links.isEmpty {
                    #expect(second.stdout.contains("its runner reported no result for suite.t2"), "\(second.stdout)")
                } else {
                    #expect(
                        second.stdout.contains("junit.xml is a link, not a file of its own; not read"),
                        "\(second.stdout)")
                    #expect(
                        third.stdout.contains("junit.xml is a hard link of a file elsewhere; not read"),
                        "\(third.stdout)")
                }
            }
            #expect(
                FileManager.default.fileExists(atPath: directory.file("outside.xml")),
                "what the links pointed at is untouched")
        }
    }
}
