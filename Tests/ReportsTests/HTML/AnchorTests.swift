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
}
