import Foundation
import OrchestrateTesting
import ProcessSupervisor
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What a scenario leaves behind is data inside its folder: links are not followed when it is read, nothing is written
/// through a link when it is written out, and what is left out is said. docs/reliability.md names these
/// tests.
@Suite("What a scenario leaves behind: links, FIFOs, huge files, too many files", .timeLimit(.minutes(3)))
struct KeptFilesTests {
    @Test(
        "links in the artifacts folder to a FIFO or a 1 GiB file are not read as results or steps: the run ends, the report is refused"
    )
    func linksInArtifacts() async throws {
        try await TemporaryDirectory.with { directory in
            // A FIFO blocks whoever opens it to read; a sparse 1 GiB file takes 17 s and 1.6 GB to read whole.
            #expect(mkfifo(directory.file("fifo"), 0o600) == 0)
            #expect(
                truncate(directory.file("big"), 0) == 0
                    || FileManager.default.createFile(atPath: directory.file("big"), contents: nil))
            #expect(truncate(directory.file("big"), 1 << 30) == 0)
            let plant = """
                A="$ORCHESTRATE_ARTIFACTS_DIR"; ln -s \(directory.file("fifo")) "$A/steps.ndjson"; ln -s \(directory.file("big")) "$A/big.json";
                ln -s \(directory.file("big")) "$A/big.xml"; truncate -s 100M "$A/huge.json"
                """.replacingOccurrences(of: "\n", with: " ")
            // A scenario whose kept folder is read for Cucumber steps, and one whose results file is read.
            let configs = [
                (
                    "suite:\n  scenarios:\n    - { id: steps, command: '\(plant)' }\n", 0,
                    "1 scenarios, 1 passed, 0 failed"
                ),
                (
                    "suite:\n  results: junit\n  scenarios:\n    - { id: results, command: 'ln -s \(directory.file("fifo")) \"$ORCHESTRATE_ARTIFACTS_DIR/junit.xml\"' }\n",
                    1, "1 scenarios, 0 passed, 1 failed"
                ),
            ]
            for (config, code, summary) in configs {
                try directory.write("suite/orchestrate.yml", config)
                let cli = OrchestrateCLI(
                    directory: directory.file("suite"), database: try await TestPostgres.shared.makeDatabaseURL())
                let run = try cli.launch(["run", "--progress", "none"], name: "run")
                let ended = await eventually(timeout: .seconds(90)) {
                    directory.read("suite/run.stdout").contains(" finished in ")
                }
                if !ended { run.terminate() }
                let result = cli.output(await run.wait(), name: "run")
                #expect(ended, "the run did not end: it reads through a link \(result.stderr)")
                #expect(result.exitCode == Int32(code), "\(result.stdout)\(result.stderr)")
                #expect(result.stdout.contains(summary), "\(result.stdout)")
                if code == 1 {
                    #expect(
                        result.stdout.contains("junit.xml is a link, not a file of its own; not read"),
                        "\(result.stdout)")
                }
            }
        }
    }

    @Test(
        "orchestrate artifacts --out DIR writes nothing through a link planted in DIR: one error, exit 2, nothing outside"
    )
    func linksInOut() async throws {
        try await TemporaryDirectory.with { directory in
            try directory.write(
                "suite/orchestrate.yml",
                """
                suite:
                  scenarios:
                    - { id: keeps, command: 'mkdir "$ORCHESTRATE_ARTIFACTS_DIR/sub" && echo one > "$ORCHESTRATE_ARTIFACTS_DIR/sub/one.txt" && echo top > "$ORCHESTRATE_ARTIFACTS_DIR/top.txt"' }
                """)
            let cli = OrchestrateCLI(
                directory: directory.file("suite"), database: try await TestPostgres.shared.makeDatabaseURL())
            let run = try await cli.run(["run", "--progress", "none"])
            #expect(run.exitCode == 0, "\(run.stdout)\(run.stderr)")
            let runID = try #require(run.stdout.split(separator: " ").dropFirst().first.map(String.init))
            try FileManager.default.createDirectory(
                atPath: directory.file("outside"), withIntermediateDirectories: true)
            try directory.write("outside/victim", "untouched")
            let out = directory.file("out")
            // A link at the attempt's folder, at a folder inside it, at a file's name.
            let plants: [(String, String)] = [
                ("attempt-1", directory.file("outside")), ("attempt-1/sub", directory.file("outside")),
                ("attempt-1/top.txt", directory.file("outside/victim")),
            ]
            for (link, target) in plants {
                try? FileManager.default.removeItem(atPath: out)
                let parent = (link as NSString).deletingLastPathComponent
                try FileManager.default.createDirectory(atPath: "\(out)/\(parent)", withIntermediateDirectories: true)
                try FileManager.default.createSymbolicLink(atPath: "\(out)/\(link)", withDestinationPath: target)
                let written = try await cli.run(["artifacts", runID, "keeps", "--out", out])
                #expect(written.exitCode == 2, "\(link): \(written.stdout)\(written.stderr)")
                #expect(written.stderr.contains("is a link"), "\(link): \(written.stderr)")
                #expect(written.stderr.split(separator: "\n").count == 1, "\(written.stderr)")
                let outside = try FileManager.default.contentsOfDirectory(atPath: directory.file("outside"))
                #expect(
                    outside == ["victim"] && directory.read("outside/victim") == "untouched",
                    "\(link): written outside: \(outside)")
            }
            try FileManager.default.removeItem(atPath: out)
            let written = try await cli.run(["artifacts", runID, "keeps", "--out", out])
            #expect(
                written.exitCode == 0 && directory.read("out/attempt-1/sub/one.txt") == "one\n", "\(written.stderr)")
        }
    }

    @Test(
        "an attempt that leaves 1,500 files: the first 1,000 are recorded, the rest counted and said; its stderr.log comes first"
    )
    func tooManyFiles() async throws {
        try await TemporaryDirectory.with { directory in
            try directory.write(
                "suite/orchestrate.yml",
                """
                artifacts: { max-bytes: 4000 }
                suite:
                  scenarios:
                    - id: litters
                      command: 'cd "$ORCHESTRATE_ARTIFACTS_DIR" && for i in $(seq 1500); do echo "file $i" > "a$i.txt"; done; echo "the reason it failed" >&2; exit 1'
                """)
            let cli = OrchestrateCLI(
                directory: directory.file("suite"), database: try await TestPostgres.shared.makeDatabaseURL())
            let run = try await cli.run(["run", "--progress", "none"])
            #expect(run.exitCode == 1, "\(run.stdout)\(run.stderr)")
            let runID = try #require(run.stdout.split(separator: " ").dropFirst().first.map(String.init))
            let written = try await cli.run(["artifacts", runID, "litters", "--out", directory.file("out")])
            #expect(written.exitCode == 0, "\(written.stderr)")
            #expect(
                written.stdout.contains("attempt-1: 501 more files left out (past the first 1000 of the attempt)"),
                "\(written.stdout)")
            #expect(
                directory.read("out/attempt-1/stderr.log").contains("the reason it failed"),
                "stderr.log was crowded out")
            let report = try await cli.run(["report", runID, "--html", directory.file("report.html")])
            #expect(report.exitCode == 0, "\(report.stderr)")
            #expect(directory.read("report.html").contains("501 more files left out"), "the report says it too")
        }
    }
}
