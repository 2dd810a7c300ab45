import Foundation
import OrchestrateTesting
import Testing

@testable import Suites

/// A listing's lines: the ids a runner printed, each without the spaces around it, whatever bytes it holds.
@Suite("Test listing")
struct TestListingTests {
    @Test("a listing is read into the same lines by its bytes as by its characters: blank ones, spaces, CRLF, tabs")
    func lines() {
        #expect(TestListing.lines(of: "  a.b/c()  \n\n d \n") == ["a.b/c()", "", "d", ""])
        #expect(TestListing.lines(of: "a\r\nb\rc\n\t d\u{E9} ") == ["a", "b\rc", "d\u{E9}"])
        // Seeded listings of printable ASCII (read by bytes), and with a tab, a carriage return or an é among them.
        let pieces = [" ", " ", "\n", "\n", "a", "Z", "/", ".", "(", ")", ":", "9", "~", "\r", "\t", "\u{E9}"]
        var random = SeededRandom(name: "listing lines")
        for round in 0..<4_000 {
            let alphabet = round.isMultiple(of: 2) ? pieces.dropLast(3) : pieces[...]
            let text = (0..<Int.random(in: 0...40, using: &random)).map { _ in alphabet.randomElement(using: &random)! }
                .joined()
            let expected = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
                .map { $0.trimmingCharacters(in: .whitespaces) }
            guard TestListing.lines(of: text) == expected else {
                Issue.record("\(text.debugDescription): \(TestListing.lines(of: text)) against \(expected)")
                return
            }
        }
    }
}
