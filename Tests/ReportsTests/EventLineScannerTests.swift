import Foundation
import OrchestrateTesting
import Reports
import Testing

/// The event stream's own scanner (``SwiftPMResults/StreamEvent/scanned(_:)``) against JSONSerialization's reading of
/// the same line: it reads what Swift Testing writes, and whatever it reads at all it reads the same.
@Suite("Swift Testing's event stream, scanned")
struct EventLineScannerTests {
    typealias Event = SwiftPMResults.StreamEvent

    /// Lines as Swift Testing 6.3 writes them: a suite, a function, each kind of event, a failure with its comments,
    /// a known issue, a skip.
    static let written = [
        #"{"kind":"test","payload":{"id":"Shop.PriceTests","kind":"suite","name":"PriceTests","sourceLocation":{"_filePath":"\/src\/Tests\/ShopTests\/T.swift","column":2,"fileID":"ShopTests\/T.swift","line":3}},"version":0}"#,
        #"{"kind":"test","payload":{"id":"Shop.PriceTests\/total()\/T.swift:4:6","isParameterized":false,"kind":"function","name":"total()","sourceLocation":{"_filePath":"\/src\/Tests\/ShopTests\/T.swift","column":6,"fileID":"ShopTests\/T.swift","line":4}},"version":0}"#,
        #"{"kind":"event","payload":{"instant":{"absolute":10092.949754434,"since1970":1795831424.6786015},"kind":"runStarted","messages":[{"symbol":"default","text":"Test run started."},{"symbol":"details","text":"Target Platform: x86_64-unknown-linux-gnu"}]},"version":0}"#,
        #"{"kind":"event","payload":{"instant":{"absolute":10092.950391912,"since1970":1795831424.6792388},"kind":"testStarted","messages":[{"symbol":"default","text":"Test total() started."}],"testID":"Shop.PriceTests\/total()\/T.swift:4:6"},"version":0}"#,
        #"{"kind":"event","payload":{"_comments":["seven is not eight"],"_sourceLocation":{"_filePath":"\/src\/Tests\/ShopTests\/T.swift","column":26,"fileID":"ShopTests\/T.swift","line":4},"instant":{"absolute":10233.636377013,"since1970":1795831565.3652244},"issue":{"_backtrace":[{"address":139728164175574},{"address":94047348911019}],"isKnown":false,"sourceLocation":{"_filePath":"\/src\/Tests\/ShopTests\/T.swift","column":26,"fileID":"ShopTests\/T.swift","line":4}},"kind":"issueRecorded","messages":[{"symbol":"fail","text":"Expectation failed: (price() -> 7) == 8"},{"symbol":"details","text":"seven is not \"eight\" \\ really"}],"testID":"Shop.PriceTests\/total()\/T.swift:4:6"},"version":0}"#,
        #"{"kind":"event","payload":{"instant":{"absolute":1.5e3,"since1970":1795831565.3},"issue":{"isKnown":true,"sourceLocation":{"fileID":"ShopTests\/T.swift","line":7}},"kind":"issueRecorded","messages":[],"testID":"Shop.PriceTests\/known()\/T.swift:7:6"},"version":0}"#,
        #"{"kind":"event","payload":{"instant":{"absolute":10092.95181215,"since1970":1795831424.6806593},"kind":"testEnded","messages":[{"symbol":"pass","text":"Test total() passed after 0.001 seconds."}],"testID":"Shop.PriceTests\/total()\/T.swift:4:6"},"version":0}"#,
        #"{"kind":"event","payload":{"_comments":["not now"],"instant":{"absolute":-0.25,"since1970":0},"kind":"testSkipped","messages":[{"symbol":"skip","text":"Test skipped() skipped: \"not now\""}],"testID":"Shop.PriceTests\/skipped()\/T.swift:6:6"},"version":0}"#,
        #" { "kind" : "event" , "payload" : { "kind" : "testEnded" , "testID" : "Shop.free()" , "instant" : { } } } "#,
        // Keys of its own inside other members are theirs, not the line's.
        #"{"kind":"event","payload":{"_testCase":{"kind":"testSkipped","testID":"other"},"kind":"testStarted","testID":"Shop.free()","issue":{"kind":"x"}},"version":{"kind":"test"}}"#,
    ]

    /// The same event, its instants to within their last bits (the scanner rounds correctly, JSONSerialization may not).
    static func same(_ scanned: Event?, _ read: Event) -> Bool {
        func close(_ a: Double?, _ b: Double?) -> Bool {
            guard let a, let b else { return a == nil && b == nil }
            return abs(a - b) <= 1e-12 * max(abs(a), abs(b))
        }
        switch (scanned, read) {
        case (.started(let id, let a)?, .started(let other, let b)): return id == other && close(a, b)
        case (.ended(let id, let a, let skipped)?, .ended(let other, let b, let alike)):
            return id == other && skipped == alike && close(a, b)
        default: return scanned == read
        }
    }

    @Test("every kind of line Swift Testing writes is scanned, and reads as JSONSerialization reads it")
    func written() {
        for line in Self.written.map({ Data($0.utf8) }) {
            let scanned = Event.scanned(line)
            #expect(scanned != nil, "\(String(decoding: line, as: UTF8.self))")
            #expect(Self.same(scanned, Event(line: line)), "\(String(decoding: line, as: UTF8.self))")
        }
        #expect(
            Event.scanned(Data(Self.written[4].utf8))
                == .issue(
                    id: "Shop.PriceTests/total()/T.swift:4:6",
                    message: #"Expectation failed: (price() -> 7) == 8 — seven is not "eight" \ really"#,
                    location: "/src/Tests/ShopTests/T.swift:4"))
    }

    @Test("a line it does not read as Swift Testing writes it is left to JSONSerialization")
    func leftAlone() {
        let unread = [
            #"{"kind":"event","payload":{"kind":"testEnded","kind":"testStarted","testID":"a"}}"#,  // a key twice
            #"{"kind":"event","payload":{"kind":"testEnded","testID":"a"},"payload":{"kind":"testEnded","testID":"b"}}"#,
            #"{"kind":"event","payload":{"kind":"testEnded","testID":"a","instant":{"absolute":1,"absolute":2}}}"#,
            #"{"kind":"event","payload":{"kind":"issueRecorded","testID":"a","issue":{"sourceLocation":{"line":1},"sourceLocation":{"line":2}}}}"#,
            #"{"kind":"event","payload":{"kind":"issueRecorded","testID":"a","issue":{},"messages":[{"text":"x","text":"y"}]}}"#,
            #"{"kind":"event","payload":{"kind":"testEnded","testID":"caf\u00e9()"}}"#,  // an escape beyond \" \\ \/
            "{\"kind\":\"event\",\"payload\":{\"kind\":\"testEnded\",\"testID\":\"café()\"}}",  // not ASCII
            #"{"kind":"event","payload":{"kind":"issueRecorded","testID":"a","issue":{"isKnown":1}}}"#,  // a type
            #"{"kind":"event","payload":{"kind":"issueRecorded","testID":"a","issue":{},"messages":["x"]}}"#,
            #"{"kind":"event","payload":{"kind":"testEnded","testID":"a","instant":{"absolute":1e999}}}"#,
            #"{"kind":"event","payload":{"kind":"testEnded","testID":"a"}} trailing"#,
            #"{"kind":"event","payload":{"kind":"testEnded","testID":"a",}}"#,
            #"{"kind":"event","payload":{"kind":"testEnded","testID":"a","n":01}}"#,
            String(repeating: "[", count: 40) + String(repeating: "]", count: 40),
            #"{"kind":"event","payload":{"kind":"testEnded","testID":"a","deep":"# + String(repeating: "[", count: 40)
                + String(repeating: "]", count: 40) + "}}",
            "", "{", "null",
        ]
        for line in unread {
            #expect(Event.scanned(Data(line.utf8)) == nil, "\(line)")
        }
    }

    @Test("whatever a changed byte makes of a line, the scanner reads it as JSONSerialization does, or leaves it")
    func mutated() {
        var random = SeededRandom(name: "event stream scanner")
        let alphabet = Array(#"{}[]":,\/ 0123456789.-+eEtruefalsn"#.utf8) + [0x00, 0x09, 0x7f, 0x80, 0xc3, 0xff]
        var scanned = 0
        var differing: [String] = []
        for _ in 0..<20_000 {
            var bytes = Array(Self.written[random.below(Self.written.count)].utf8)
            for _ in 0...random.below(3) {
                let at = random.below(bytes.count)
                switch random.below(4) {
                case 0: bytes.remove(at: at)
                case 1: bytes.insert(alphabet[random.below(alphabet.count)], at: at)
                case 2: bytes[at] = alphabet[random.below(alphabet.count)]
                default:
                    let end = min(bytes.count, at + 1 + random.below(12))
                    bytes.insert(contentsOf: bytes[at..<end], at: at)
                }
                if bytes.isEmpty { bytes = [0x7b] }
            }
            let line = Data(bytes)
            guard let event = Event.scanned(line) else { continue }
            scanned += 1
            if !Self.same(event, Event(line: line)), differing.count < 5 {
                differing.append(String(decoding: bytes, as: UTF8.self))
            }
        }
        #expect(differing.isEmpty, "\(differing)")
        // Most changes break the JSON; those that do not (a changed digit, a letter in a text) are scanned.
        #expect(scanned > 2_000, "scanned \(scanned) of 20,000")
    }
}
