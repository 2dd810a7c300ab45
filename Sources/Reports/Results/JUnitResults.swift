import Foundation

#if canImport(FoundationXML)
import FoundationXML
import OrchestrateModel
#endif

/// One test's outcome as a runner reported it: what orchestrate keeps per test when a scenario's command runs a suite
/// of its own (pytest, jest, Gradle, xcodebuild through xcpretty or xcbeautify, `swift test --xunit-output`).
package struct RunnerTestResult: Sendable, Equatable {
    package enum Status: String, Sendable {
        case passed, failed, skipped
    }

    /// `classname/name` (SwiftPM's `Module.Class/test`), or the name alone when the runner wrote no class.
    package var id: String { classname.isEmpty ? name : "\(classname)/\(name)" }
    package var classname: String
    package var name: String
    package var status: Status
    /// The runner's time for the test; nil when it wrote none (xcpretty leaves it off failures).
    package var seconds: Double?
    /// When it started, in seconds on the runner's own clock, where the runner says (Swift Testing's events): with it,
    /// the time a process spent outside its tests is known even when they ran in parallel inside it.
    package var startedAt: Double?
    /// The failure's or error's message (its text when it has no message attribute), or why it was skipped.
    package var message: String?
    /// The first `file:line` of a source file that the failure names.
    package var location: String?
    /// Failed outside its assertions (JUnit's `<error>`: an exception, a broken fixture) rather than in one.
    package var isError = false

    /// The message after the `file:line` it names, as reports and logs show a failure.
    package var failure: String? { message.map { message in location.map { "\($0): \(message)" } ?? message } }
}

/// A results file that cannot be read, with the file and line that say why.
package struct RunnerResultsError: CodedError {
    package typealias Code = ErrorCode<RunnerResultsError>

    package let code: Code
    package let message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}

/// JUnit XML as runners write it: a `<testsuites>` root (pytest, jest-junit, xcpretty, xcbeautify, SwiftPM) or a single
/// `<testsuite>` root (Gradle, one file per class), suites nested at any depth, and per `<testcase>` a `<failure>`, an
/// `<error>` or a `<skipped>` (pytest's xfail is a skip with its reason), or none for a pass.
package enum JUnitResults {
    /// Larger files are refused rather than read: a report of a hundred thousand tests is a few megabytes.
    package static let maximumBytes = 64 << 20

    /// A result made in code (tests, and readers of other formats).
    package static func result(classname: String, name: String, status: RunnerTestResult.Status) -> RunnerTestResult {
        RunnerTestResult(classname: classname, name: name, status: status)
    }

    /// The tests of a JUnit XML document; `file` names it in errors.
    package static func parse(_ data: Data, file: String) throws -> [RunnerTestResult] {
        guard data.count <= maximumBytes else {
            throw RunnerResultsError(
                .refused,
                "\(file): \(data.count) bytes, more than a results file may have (\(maximumBytes))")
        }
        // A report declares no entities of its own: expanding them is work without bound for a few bytes of input (a
        // 100 KB entity referenced 160,000 times), and no runner writes them.
        if let (line, problem) = prologProblem(data) {
            throw RunnerResultsError(.refused, "\(file):\(line): not read: \(problem)")
        }
        // Fed in pieces: libxml2 refuses a single piece past 10 MB ("huge input lookup"), which a whole report of a
        // hundred thousand tests is.
        let parser = XMLParser(stream: InputStream(data: data))
        parser.shouldResolveExternalEntities = false
        let reader = Reader()
        parser.delegate = reader
        guard parser.parse(), reader.problem == nil else {
            let reason = reader.problem ?? parser.parserError.map { "\($0.localizedDescription)" } ?? "not XML"
            throw RunnerResultsError(.notAReport, "\(file):\(parser.lineNumber): not a JUnit XML report: \(reason)")
        }
        guard reader.sawRoot else {
            throw RunnerResultsError(.notAReport, "\(file):1: not a JUnit XML report: no element")
        }
        // The parser takes a document cut short as whole: an element left open means the runner did not finish it.
        if let open = reader.open.last {
            throw RunnerResultsError(
                .cutShort, "\(file):\(parser.lineNumber): not a JUnit XML report: it ends inside <\(open)> (cut short?)"
            )
        }
        return reader.results
    }

    /// What makes the document's prolog (what comes before its first element: comments, processing instructions, white
    /// space, a DOCTYPE) unfit to read, with its line: a DOCTYPE with an internal subset (`<!DOCTYPE x [ … ]>`, where
    /// entities are declared), a prolog too long to look through, a document not in UTF-8. `nil` when it is fit.
    static func prologProblem(_ data: Data) -> (line: Int, problem: String)? {
        let limit = 1 << 20
        let bytes = [UInt8](data.prefix(limit))
        if bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE]) || (bytes.count > 1 && bytes[1] == 0)
            || bytes.first == 0
        {
            return (1, "it is not UTF-8 (UTF-16?), which every runner writes")
        }
        var index = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        func line() -> Int { bytes[..<min(index, bytes.count)].count { $0 == UInt8(ascii: "\n") } + 1 }
        let tooLong = "what comes before its first element is longer than 1 MiB"
        func has(_ text: String, at position: Int) -> Bool { bytes[position...].starts(with: Array(text.utf8)) }
        func skip(past end: String) -> Bool {
            let target = Array(end.utf8)
            while index < bytes.count {
                if bytes[index...].starts(with: target) {
                    index += target.count
                    return true
                }
                index += 1
            }
            return false
        }
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                index += 1
            case UInt8(ascii: "<") where has("<?", at: index):
                guard skip(past: "?>") else { return bytes.count == limit ? (line(), tooLong) : nil }
            case UInt8(ascii: "<") where has("<!--", at: index):
                guard skip(past: "-->") else { return bytes.count == limit ? (line(), tooLong) : nil }
            case UInt8(ascii: "<") where has("<!DOCTYPE", at: index):
                let start = line()
                // The DOCTYPE ends at the first `>` outside quotes; a `[` before it opens an internal subset.
                var quote: UInt8?
                while index < bytes.count {
                    let byte = bytes[index]
                    if let open = quote {
                        if byte == open { quote = nil }
                    } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                        quote = byte
                    } else if byte == UInt8(ascii: "[") {
                        return (
                            start,
                            "it declares entities of its own (a DOCTYPE with an internal subset), which no runner writes"
                        )
                    } else if byte == UInt8(ascii: ">") {
                        return nil
                    }
                    index += 1
                }
                return bytes.count == limit ? (start, tooLong) : nil
            default:
                // The first element: the prolog is over.
                return nil
            }
        }
        return bytes.count == limit ? (line(), tooLong) : nil
    }

    /// The first `file:line` of a source file in `text`.
    static func location(in text: String) -> String? {
        guard let match = locationPattern.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)),
            let range = Range(match.range(at: 1), in: text)
        else { return nil }
        return String(text[range])
    }

    private static let locationPattern = try! NSRegularExpression(
        pattern:
            #"((?:[A-Za-z0-9_.~-]*/)*[A-Za-z0-9_.-]+\.(?:swift|py|js|mjs|cjs|ts|tsx|jsx|kt|kts|java|scala|rb|go|m|mm|c|cc|cpp|h|feature):[0-9]+)"#
    )

    /// Collects test cases as the parser walks the document.
    private final class Reader: NSObject, XMLParserDelegate {
        var results: [RunnerTestResult] = []
        var problem: String?
        var sawRoot = false
        /// The elements open at this point of the document, outermost first.
        var open: [String] = []
        private var current: RunnerTestResult?
        /// The text of the `<failure>`, `<error>` or `<skipped>` being read, when it had no message attribute.
        private var text: String?

        func parser(
            _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            open.append(name)
            if !sawRoot {
                sawRoot = true
                guard name == "testsuites" || name == "testsuite" else {
                    problem = "the root element is <\(name)>, not <testsuites> or <testsuite>"
                    parser.abortParsing()
                    return
                }
            }
            switch name {
            case "testcase":
                current = RunnerTestResult(
                    classname: attributes["classname"] ?? "", name: attributes["name"] ?? "", status: .passed,
                    seconds: attributes["time"].flatMap(Self.seconds))
            case "failure", "error":
                guard current != nil else { return }
                // A test with both (pytest: a failing test whose teardown errs too) is failed by the first.
                if current?.status != .failed {
                    current?.status = .failed
                    current?.isError = name == "error"
                    current?.message = attributes["message"].flatMap(Self.nonEmpty)
                    if let message = current?.message { current?.location = JUnitResults.location(in: message) }
                    text = ""
                }
            case "skipped":
                guard current != nil, current?.status == .passed else { return }
                current?.status = .skipped
                current?.message = attributes["message"].flatMap(Self.nonEmpty)
            default:
                break
            }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            text?.append(string)
        }

        func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) {
            text?.append(String(decoding: CDATABlock, as: UTF8.self))
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            guard open.last == name else {
                problem = "</\(name)> closes <\(open.last ?? "nothing")>"
                parser.abortParsing()
                return
            }
            open.removeLast()
            switch name {
            case "failure", "error":
                guard let body = text.flatMap(Self.nonEmpty) else {
                    text = nil
                    return
                }
                text = nil
                if current?.message == nil { current?.message = body }
                // The body holds the traceback, which names the file and line better than the message does.
                if let found = JUnitResults.location(in: body) { current?.location = found }
            case "testcase":
                if let current { results.append(current) }
                current = nil
                text = nil
            default:
                break
            }
        }

        static func seconds(_ text: String) -> Double? {
            // Some runners write the machine's locale: "0,012".
            Double(text.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: ",", with: "."))
        }

        static func nonEmpty(_ text: String) -> String? {
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            return trimmed.isEmpty ? nil : trimmed
        }
    }
}

extension ErrorCode where Domain == RunnerResultsError {
    /// Not a report of the format asked for (not XML, not an array of features, no element).
    package static let notAReport = Self("notAReport")
    /// A report ended inside an element: its runner did not finish it.
    package static let cutShort = Self("cutShort")
    /// Not read on purpose: a link, a file of another folder, too large, entities of its own.
    package static let refused = Self("refused")
    /// The runner's own listing failed (xcodebuild's errors in its enumeration).
    package static let listingFailed = Self("listingFailed")
}
