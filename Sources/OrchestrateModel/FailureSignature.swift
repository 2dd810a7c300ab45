/// What a failure is, with what changes from one occurrence to the next taken out, so that failures with one cause
/// group together across tests and runs (`orchestrate failures`, the HTML report): its place (`file:line`), its message
/// with volatile parts normalised, and the exchange that failed at the failing step when there is one:
/// `tests/test_cart.py:14 · AssertionError: expected <n> items, got <n> · POST api.x.test/v1/carts/{id} → 500`.
///
/// Normalised: UUIDs (`<uuid>`), network addresses with their port (`<addr>`), temporary paths (`<tmp>`), times and
/// dates (`<time>`), long hexadecimal runs (`<hex>`) and every other number (`<n>`). In an endpoint's path, a segment
/// that names one thing is `{id}` (``endpoint(method:host:url:)``). The message is its first line with something in
/// it, without escape sequences and control characters (``TerminalText/plain(_:)``), the test's own id in it `<test>`, at most
/// ``messageLimit`` characters; a number keeps its unit (`<n>ms`).
package enum FailureSignature {
    package static let messageLimit = 200

    /// What a failure said, and whether the test said it (a runner's failure, a step's error, its standard error) or
    /// orchestrate did (`exited with status 1`, `timed out`): only the test's words are normalised.
    package struct Said: Sendable, Equatable {
        package var text: String
        package var byTest: Bool

        package init(_ text: String, byTest: Bool) {
            self.text = text
            self.byTest = byTest
        }
    }

    /// The signature of a failed attempt of `test`: `place` where it failed (`nil` when unknown), what it `said`
    /// (``message(_:failingStep:)``), and the failing exchange (``endpoint(method:host:url:)`` and what came back: a
    /// status, `no answer`, `not recorded`). With neither a place, an exchange nor words of the test's own, it is the
    /// test's alone (its id last): `exited with status 1` says nothing two tests could share.
    package static func make(
        place: (file: String, line: Int?)?, said: Said, exchange: String?, test: String? = nil
    ) -> String {
        var parts: [String] = []
        if let place { parts.append(place.file + (place.line.map { ":\($0)" } ?? "")) }
        var text = firstLine(said.text)
        // A place leading the message is the signature's place already.
        if let place, text.hasPrefix(place.file + ":") {
            text = String(text.dropFirst(place.file.count + 1).drop { $0.isNumber || $0 == ":" }.drop { $0 == " " })
        }
        if let test { text = withoutTest(text, test) }
        parts.append(String((said.byTest ? normalised(text) : text).prefix(messageLimit)))
        if let exchange { parts.append(exchange) }
        if !said.byTest, place == nil, exchange == nil, let test { parts.append(test) }
        return parts.joined(separator: " · ")
    }

    /// The first line that says something (``TerminalText/plain(_:)``), read no further than a few times what a signature keeps: a
    /// runner's message may be megabytes on one line.
    static func firstLine(_ text: String) -> String {
        var rest = Substring(text)
        while !rest.isEmpty {
            let end = rest.utf8.firstIndex { $0 == 0x0A || $0 == 0x0D } ?? rest.endIndex
            let line = TerminalText.plain(rest[..<end].prefix(messageLimit * 4))
            if !line.allSatisfy(\.isWhitespace) { return line }
            rest = end < rest.endIndex ? rest[rest.utf8.index(after: end)...] : ""
        }
        return ""
    }

    /// The text with the test's own id, where it stands alone, as `<test>` (`no result for tests/x.py::test_y`): only
    /// an id that is not a plain word (`login` may be what a message says, not the test).
    static func withoutTest(_ text: String, _ test: String) -> String {
        guard test.count >= 3, test.contains(where: { !$0.isLetter }) else { return text }
        var output = ""
        var rest = Substring(text)
        while let found = rest.firstRange(of: test) {
            let before = found.lowerBound > rest.startIndex ? rest[rest.index(before: found.lowerBound)] : " "
            let after = found.upperBound < rest.endIndex ? rest[found.upperBound] : " "
            output += rest[..<found.lowerBound]
            output += isWord(before) || isWord(after) ? String(rest[found]) : "<test>"
            rest = rest[found.upperBound...]
        }
        return output + rest
    }

    /// What a failed attempt said of its failure: the runner's failure when it gave one, else its failing step and what
    /// that said (`When I pay: card declined`), else the last line its test wrote to standard error
    /// (`curl: (22) The requested URL returned error: 502`), else orchestrate's own words: `exited with status 1`,
    /// `timed out` (not for how long), `crashed with signal 11`, an infrastructure error with its cause.
    package static func message(_ attempt: AttemptRecord, failingStep: String? = nil) -> Said {
        switch attempt.outcome {
        case .timedOut?: return Said("timed out", byTest: false)
        case .crashed?: return Said("crashed with signal \(attempt.signal ?? 0)", byTest: false)
        case .infrastructureError?: return Said("infrastructure error: \(attempt.error ?? "unknown")", byTest: true)
        case .failed?:
            if let error = attempt.error, !error.allSatisfy(\.isWhitespace) { return Said(error, byTest: true) }
            if let failingStep { return Said(failingStep, byTest: true) }
            if let line = attempt.stderr.split(whereSeparator: \.isNewline).last(where: {
                !TerminalText.plain($0).allSatisfy(\.isWhitespace)
            }) {
                return Said(String(line), byTest: true)
            }
            return Said(attempt.exitCode.map { "exited with status \($0)" } ?? "failed", byTest: false)
        case .passed?, nil: return Said(attempt.failureSummary, byTest: false)
        }
    }

    /// `POST api.x.test/v1/carts/{id}`: the host the app addressed and the path without its query, each segment that
    /// names one thing an id.
    package static func endpoint(method: String, host: String, url: String) -> String {
        var path = Substring(url)
        if let scheme = path.firstRange(of: "://") {
            let rest = path[scheme.upperBound...]
            path = rest.firstIndex(of: "/").map { rest[$0...] } ?? "/"
        } else if path.hasPrefix("/\(host)/") {
            path = path.dropFirst(host.count + 1)
        }
        if let query = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<query] }
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).map { segment in
            isIdentifier(segment) ? "{id}" : String(segment)
        }
        return "\(method) \(host)\(segments.joined(separator: "/"))"
    }

    /// The endpoint a network difference's request names (`GET api.x.test/v1/carts/42?x=1`, or with the full URL or the
    /// mock server's path): ``endpoint(method:host:url:)``; `nil` without a method.
    package static func endpoint(request: String) -> String? {
        guard let space = request.firstIndex(of: " ") else { return nil }
        let method = String(request[..<space])
        let target = request[request.index(after: space)...]
        let host: Substring
        if let scheme = target.firstRange(of: "://") {
            host = target[scheme.upperBound...].prefix { !"/?#:".contains($0) }
            return endpoint(method: method, host: String(host), url: String(target))
        }
        let path = target.hasPrefix("/") ? target.dropFirst() : target
        host = path.prefix { !"/?#".contains($0) }
        let rest = path.dropFirst(host.count)
        return endpoint(method: method, host: String(host), url: "/\(host)" + (rest.hasPrefix("/") ? rest : "/" + rest))
    }

    /// A path segment that names one thing rather than a kind (`42`, `6f1c2a3e`, a UUID, a long token with digits);
    /// `v2` and `items` are not.
    private static func isIdentifier(_ segment: Substring) -> Bool {
        guard let first = segment.first, segment.contains(where: \.isNumber) else { return false }
        return first.isNumber || segment.count >= 16 || (segment.count >= 8 && segment.allSatisfy(\.isHexDigit))
    }

    /// The text with its volatile parts replaced, one pass over its characters.
    package static func normalised(_ text: String) -> String {
        let characters = Array(text)
        var output = ""
        var index = 0
        while index < characters.count {
            if let (length, token) = volatile(characters, at: index) {
                output += token
                index += length
            } else {
                output.append(characters[index])
                index += 1
            }
        }
        return output
    }

    /// The volatile part that starts at `index`, its length and what stands for it: one that starts and ends at the
    /// edges of a word (a number inside a name, `test_2` or `v2beta`, stays).
    private static func volatile(_ characters: [Character], at index: Int) -> (Int, String)? {
        if characters[index] == "/", let length = temporaryPath(characters, at: index) { return (length, "<tmp>") }
        guard characters[index].isHexDigit, index == 0 || !isWord(characters[index - 1]) else { return nil }
        for (matcher, token) in matchers {
            guard let length = matcher(characters, index) else { continue }
            let next = index + length
            guard next < characters.count, isWord(characters[next]) else { return (length, token) }
            // A number with its unit (`250ms`, `0.53s`, `12KiB`) is still a number.
            guard token == "<n>", let unit = unit(characters, next) else { continue }
            return (length + unit.count, token + unit)
        }
        return nil
    }

    /// What a volatile part may be, in the order they are tried; each starts with a hexadecimal digit.
    private static let matchers: [(@Sendable ([Character], Int) -> Int?, String)] = [
        (uuid, "<uuid>"), (address, "<addr>"), (time, "<time>"), (hex, "<hex>"), (number, "<n>"),
    ]

    private static let units = [
        "ms", "us", "µs", "ns", "s", "m", "h", "d", "x", "b", "kb", "mb", "gb", "kib", "mib", "gib",
    ]

    /// The unit that follows a number at `index` and ends a word.
    private static func unit(_ characters: [Character], _ index: Int) -> String? {
        let word = String(characters[index...].prefix(while: isWord))
        return units.contains(word.lowercased()) ? word : nil
    }

    private static func isWord(_ character: Character) -> Bool {
        character.isLetter || character.isNumber || character == "_"
    }

    /// How many digits start at `index`.
    private static func digits(_ characters: [Character], _ index: Int) -> Int {
        var end = index
        while end < characters.count, characters[end].isASCII, characters[end].isNumber { end += 1 }
        return end - index
    }

    /// Digits, `separator`, digits… as the `counts` say (each a range of digit counts); the length matched.
    private static func groups(
        _ characters: [Character], _ index: Int, _ counts: [ClosedRange<Int>], separator: Character
    ) -> Int? {
        var end = index
        for (position, count) in counts.enumerated() {
            if position > 0 {
                guard end < characters.count, characters[end] == separator else { return nil }
                end += 1
            }
            let found = digits(characters, end)
            guard count.contains(found) else { return nil }
            end += found
        }
        return end - index
    }

    private static func uuid(_ characters: [Character], _ index: Int) -> Int? {
        guard index + 36 <= characters.count else { return nil }
        let matches = (0..<36).allSatisfy { offset in
            let character = characters[index + offset]
            return [8, 13, 18, 23].contains(offset) ? character == "-" : character.isHexDigit
        }
        return matches ? 36 : nil
    }

    /// An IPv4 address, with a port.
    private static func address(_ characters: [Character], _ index: Int) -> Int? {
        guard var length = groups(characters, index, [1...3, 1...3, 1...3, 1...3], separator: ".") else { return nil }
        if let port = groups(characters, index + length, [0...0, 1...5], separator: ":") { length += port }
        return length
    }

    /// `2026-11-27`, `07:09:41.391`, and the two joined by `T` (with a `Z`).
    private static func time(_ characters: [Character], _ index: Int) -> Int? {
        func clock(_ at: Int) -> Int? {
            guard var length = groups(characters, at, [2...2, 2...2], separator: ":") else { return nil }
            if let seconds = groups(characters, at + length, [0...0, 2...2], separator: ":") { length += seconds }
            if let fraction = groups(characters, at + length, [0...0, 1...9], separator: ".") { length += fraction }
            return length
        }
        guard var length = groups(characters, index, [4...4, 2...2, 2...2], separator: "-") else {
            return clock(index)
        }
        if index + length < characters.count, characters[index + length] == "T",
            let time = clock(index + length + 1)
        {
            length += 1 + time
            if index + length < characters.count, characters[index + length] == "Z" { length += 1 }
        }
        return length
    }

    /// `0x1f…`, or a run of at least 8 hexadecimal digits with a digit and a letter in it (a digest, an object id).
    private static func hex(_ characters: [Character], _ index: Int) -> Int? {
        let run = characters[index...].prefix(while: \.isHexDigit)
        if run.count == 1, run.first == "0", index + 2 < characters.count, characters[index + 1] == "x" {
            let rest = characters[(index + 2)...].prefix(while: \.isHexDigit).count
            return rest > 0 ? 2 + rest : nil
        }
        return run.count >= 8 && run.contains(where: \.isNumber) && run.contains(where: \.isLetter) ? run.count : nil
    }

    /// Digits, with a decimal part.
    private static func number(_ characters: [Character], _ index: Int) -> Int? {
        let whole = digits(characters, index)
        guard whole > 0 else { return nil }
        return whole + (groups(characters, index + whole, [0...0, 1...20], separator: ".") ?? 0)
    }

    /// Temporary folders whose names change from run to run: `/tmp/…`, `/var/folders/…`, `/private/var/folders/…`,
    /// `/var/tmp/…`, the path up to the next space or quote.
    private static func temporaryPath(_ characters: [Character], at index: Int) -> Int? {
        let previous = index > 0 ? characters[index - 1] : " "
        guard !(previous.isLetter || previous.isNumber || previous == "/" || previous == "." || previous == "_") else {
            return nil
        }
        let rest = String(characters[index..<min(characters.count, index + 22)])
        guard
            ["/tmp/", "/var/folders/", "/private/var/folders/", "/private/tmp/", "/var/tmp/"].contains(where: {
                rest.hasPrefix($0)
            })
        else { return nil }
        var end = index
        while end < characters.count, !(characters[end].isWhitespace || "'\"`,;)]}>".contains(characters[end])) {
            end += 1
        }
        // A path's last `:line` or `:` is not part of it.
        while end > index, characters[end - 1] == ":" || characters[end - 1] == "." { end -= 1 }
        return end - index
    }
}
