import Foundation
import OrchestrateModel
import Reports
import Testing

@Suite("The HTML report's links")
struct AnchorTests {
    @Test("each test's row links to its section by a name of letters and digits, whatever its id holds")
    func anchors() {
        let names = [
            "Module.Suite/test(a:)": "s-Module-Suite-test-a--",
            "tests/test_x.py::test[1-2]": "s-tests-test-x-py--test-1-2-",
            "caf\u{E9}/\u{6F22}\u{5B57} 1": "s-caf\u{E9}-\u{6F22}\u{5B57}-1",
            "a\"<b>'&": "s-a--b---",
        ]
        var report = TimelineTests.report(scenarios: names.count, hosts: 1)
        for (index, id) in names.keys.sorted().enumerated() {
            report.scenarios[index].scenario.id = id
        }
        let html = HTMLReport.render(report, logs: [:])
        for (id, anchor) in names {
            #expect(html.contains("<a href=\"#\(anchor)\">"), "\(id): no link to \(anchor)")
            #expect(html.contains("<section id=\"\(anchor)\""), "\(id): no section \(anchor)")
        }
    }

    @Test("the command that fetches a test's kept files names its id as one shell word, whatever the id's characters")
    func artifactsCommand() {
        // A letter that joins with what follows it (U+0D4E) and a combining mark after a quote: one Character each
        // with the byte the shell reads as syntax.
        let words = [
            "Module.Suite/test": "Module.Suite/test",
            "x\u{D4E};touch pwned": "&apos;x\u{D4E};touch pwned&apos;",
            "a'\u{301}b": "&apos;a&apos;\\&apos;&apos;\u{301}b&apos;",
        ]
        var report = TimelineTests.report(scenarios: words.count, hosts: 1)
        var kept: [Int64: KeptFiles] = [:]
        for (index, id) in words.keys.sorted().enumerated() {
            report.scenarios[index].scenario.id = id
            kept[report.scenarios[index].attempts[0].id] = KeptFiles(files: [.init(path: "f", bytes: 1, stored: true)])
        }
        let html = HTMLReport.render(report, logs: [:], kept: kept)
        let run = report.runID.uuidString.lowercased()
        for (id, word) in words {
            #expect(html.contains("<code>orchestrate artifacts \(run) \(word) --out DIR</code>"), "\(id)")
        }
    }
}
