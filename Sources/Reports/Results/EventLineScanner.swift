import Foundation

extension SwiftPMResults.StreamEvent {
    /// The event of one line of the event stream, read by a scanner of its own in a fraction of JSONSerialization's
    /// time: what Swift Testing writes on nearly every line (plain ASCII, each key read once, values of the types it
    /// writes). Anything else — invalid JSON, other bytes, a key twice, a value of another type, an escape other than the
    /// plain ones, nesting deeper than 32 — is `nil`, and ``init(line:)`` reads it instead: the scanner decides nothing
    /// that JSONSerialization would not, except that its instants are correctly rounded where JSONSerialization's may
    /// differ in the last bit.
    package static func scanned(_ line: Data) -> Self? {
        line.withUnsafeBytes { raw in
            var scanner = EventLineScanner(bytes: raw.assumingMemoryBound(to: UInt8.self))
            return try? scanner.event()
        }
    }
}

/// One line of the event stream, scanned byte by byte: every value is checked as JSON's grammar says, and only the
/// members results need are kept.
private struct EventLineScanner {
    let bytes: UnsafeBufferPointer<UInt8>
    var at = 0
    var depth = 0

    /// Not a line the scanner reads (``SwiftPMResults/StreamEvent/init(line:)`` does).
    struct Unread: Error {}

    /// What the line says: its members read as ``SwiftPMResults/StreamEvent/init(line:)`` reads them.
    mutating func event() throws -> SwiftPMResults.StreamEvent {
        var record: String?
        var payload: Payload?
        try open(UInt8(ascii: "{"))
        var first = true
        while let key = try member(&first) {
            switch key {
            case "kind": try once(&record, string())
            case "payload": try once(&payload, self.payload())
            default: try skipValue()
            }
        }
        skipSpace()
        guard at == bytes.count, let payload else { throw Unread() }
        if record == "test" {
            guard payload.kind == "function", let id = payload.id else { return .other }
            return .function(id: id, name: payload.name ?? "")
        }
        guard let kind = payload.kind, let id = payload.testID else { return .other }
        switch kind {
        case "testStarted":
            return .started(id: id, instant: payload.absolute ?? nil)
        case "issueRecorded":
            guard let issue = payload.issue, issue.isKnown != true else { return .other }
            let location = issue.line.map { "\(issue.filePath ?? issue.fileID ?? ""):\($0)" }
            return .issue(id: id, message: (payload.messages ?? []).joined(separator: " — "), location: location)
        case "testEnded", "testSkipped":
            return .ended(id: id, instant: payload.absolute ?? nil, skipped: kind == "testSkipped")
        default:
            return .other
        }
    }

    /// The payload's members that results read.
    struct Payload {
        var kind: String?
        var id: String?
        var name: String?
        var testID: String?
        /// The instant's `absolute` (`.some(nil)`: an instant without one).
        var absolute: Double??
        var issue: Issue?
        /// The messages' texts.
        var messages: [String]?
    }

    struct Issue {
        var isKnown: Bool?
        var located = false
        var filePath: String?
        var fileID: String?
        var line: Int?
    }

    mutating func payload() throws -> Payload {
        var payload = Payload()
        try open(UInt8(ascii: "{"))
        var first = true
        while let key = try member(&first) {
            switch key {
            case "kind": try once(&payload.kind, string())
            case "id": try once(&payload.id, string())
            case "name": try once(&payload.name, string())
            case "testID": try once(&payload.testID, string())
            case "instant": try once(&payload.absolute, instant())
            case "issue": try once(&payload.issue, issue())
            case "messages": try once(&payload.messages, texts())
            default: try skipValue()
            }
        }
        return payload
    }

    /// `{"absolute": number, …}`: the number.
    mutating func instant() throws -> Double? {
        var absolute: Double?
        try open(UInt8(ascii: "{"))
        var first = true
        while let key = try member(&first) {
            if key == "absolute" { try once(&absolute, number()) } else { try skipValue() }
        }
        return absolute
    }

    mutating func issue() throws -> Issue {
        var issue = Issue()
        try open(UInt8(ascii: "{"))
        var first = true
        while let key = try member(&first) {
            switch key {
            case "isKnown": try once(&issue.isKnown, bool())
            case "sourceLocation":
                guard !issue.located else { throw Unread() }
                issue.located = true
                try open(UInt8(ascii: "{"))
                var firstMember = true
                while let key = try member(&firstMember) {
                    switch key {
                    case "_filePath": try once(&issue.filePath, string())
                    case "fileID": try once(&issue.fileID, string())
                    case "line": try once(&issue.line, integer())
                    default: try skipValue()
                    }
                }
            default: try skipValue()
            }
        }
        return issue
    }

    /// `[{"text": string, …}, …]`: the texts.
    mutating func texts() throws -> [String] {
        var texts: [String] = []
        try open(UInt8(ascii: "["))
        var first = true
        while try element(&first) {
            var text: String?
            try open(UInt8(ascii: "{"))
            var firstMember = true
            while let key = try member(&firstMember) {
                if key == "text" { try once(&text, string()) } else { try skipValue() }
            }
            if let text { texts.append(text) }
        }
        return texts
    }

    /// Reads a member's value into `slot`, which must not hold one yet. (`value` is read before `slot` is looked at:
    /// a key twice is found after its second value.)
    func once<T>(_ slot: inout T?, _ value: T) throws {
        guard slot == nil else { throw Unread() }
        slot = value
    }

    /// The `{` or `[` that opens an object or array, one level deeper.
    mutating func open(_ bracket: UInt8) throws {
        skipSpace()
        try expect(bracket)
        depth += 1
        guard depth <= 32 else { throw Unread() }
    }

    /// The next member's key of the object opened last, its colon read; `nil` at its end. `first`: none read yet.
    mutating func member(_ first: inout Bool) throws -> String? {
        guard try more(&first, closing: UInt8(ascii: "}")) else { return nil }
        skipSpace()
        let key = try string()
        skipSpace()
        try expect(UInt8(ascii: ":"))
        skipSpace()
        return key
    }

    /// Whether the array opened last has another element (then read by the caller); `first`: none read yet.
    mutating func element(_ first: inout Bool) throws -> Bool {
        guard try more(&first, closing: UInt8(ascii: "]")) else { return false }
        skipSpace()
        return true
    }

    /// After `{`, `[` or a member or element: `false` on `closing` (the level left), `true` where another follows.
    private mutating func more(_ first: inout Bool, closing: UInt8) throws -> Bool {
        skipSpace()
        if first {
            first = false
            guard try peek() == closing else { return true }
            at += 1
        } else {
            let next = try take()
            if next == UInt8(ascii: ",") { return true }
            guard next == closing else { throw Unread() }
        }
        depth -= 1
        return false
    }

    /// Any value, checked and passed over.
    mutating func skipValue() throws {
        skipSpace()
        switch try peek() {
        case UInt8(ascii: "{"):
            try open(UInt8(ascii: "{"))
            var first = true
            while try member(&first) != nil { try skipValue() }
        case UInt8(ascii: "["):
            try open(UInt8(ascii: "["))
            var first = true
            while try element(&first) { try skipValue() }
        case UInt8(ascii: "\""): _ = try string()
        case UInt8(ascii: "t"), UInt8(ascii: "f"): _ = try bool()
        case UInt8(ascii: "n"): try word("null")
        // A number out of a Double's range is no JSON that JSONSerialization reads.
        default: _ = try number()
        }
    }

    /// A string of printable ASCII, with the escapes `\"`, `\\` and `\/` (others: ``Unread``).
    mutating func string() throws -> String {
        try expect(UInt8(ascii: "\""))
        var plain = true
        let start = at
        while true {
            let byte = try take()
            if byte == UInt8(ascii: "\"") { break }
            guard byte >= 0x20, byte < 0x7f else { throw Unread() }
            if byte == UInt8(ascii: "\\") {
                let escaped = try take()
                guard escaped == UInt8(ascii: "\"") || escaped == UInt8(ascii: "\\") || escaped == UInt8(ascii: "/")
                else { throw Unread() }
                plain = false
            }
        }
        let content = UnsafeBufferPointer(rebasing: bytes[start..<(at - 1)])
        guard !plain else { return String(decoding: content, as: UTF8.self) }
        var unescaped: [UInt8] = []
        unescaped.reserveCapacity(content.count)
        var escaping = false
        for byte in content {
            if !escaping && byte == UInt8(ascii: "\\") {
                escaping = true
                continue
            }
            escaping = false
            unescaped.append(byte)
        }
        return String(decoding: unescaped, as: UTF8.self)
    }

    mutating func bool() throws -> Bool {
        if try peek() == UInt8(ascii: "t") {
            try word("true")
            return true
        }
        try word("false")
        return false
    }

    /// A number as JSON writes one, as a Double.
    mutating func number() throws -> Double {
        guard let value = Double(try numberText()), value.isFinite else { throw Unread() }
        return value
    }

    /// A number without fraction or exponent that fits an Int.
    mutating func integer() throws -> Int {
        let text = try numberText()
        guard let value = Int(text) else { throw Unread() }
        return value
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, as text.
    mutating func numberText() throws -> String {
        let start = at
        if at < bytes.count, bytes[at] == UInt8(ascii: "-") { at += 1 }
        let first = try take()
        if first == UInt8(ascii: "0") {
            if at < bytes.count, isDigit(bytes[at]) { throw Unread() }
        } else {
            guard isDigit(first) else { throw Unread() }
            digits()
        }
        if at < bytes.count, bytes[at] == UInt8(ascii: ".") {
            at += 1
            guard at < bytes.count, isDigit(bytes[at]) else { throw Unread() }
            digits()
        }
        if at < bytes.count, bytes[at] == UInt8(ascii: "e") || bytes[at] == UInt8(ascii: "E") {
            at += 1
            if at < bytes.count, bytes[at] == UInt8(ascii: "+") || bytes[at] == UInt8(ascii: "-") { at += 1 }
            guard at < bytes.count, isDigit(bytes[at]) else { throw Unread() }
            digits()
        }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<at]), as: UTF8.self)
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func digits() {
        while at < bytes.count, isDigit(bytes[at]) { at += 1 }
    }

    private mutating func word(_ word: StaticString) throws {
        let count = word.utf8CodeUnitCount
        guard bytes.count - at >= count,
            word.withUTF8Buffer({ $0.elementsEqual(UnsafeBufferPointer(rebasing: bytes[at..<(at + count)])) })
        else { throw Unread() }
        at += count
    }

    private mutating func skipSpace() {
        while at < bytes.count,
            bytes[at] == UInt8(ascii: " ") || bytes[at] == UInt8(ascii: "\t") || bytes[at] == UInt8(ascii: "\r")
        {
            at += 1
        }
    }

    private func peek() throws -> UInt8 {
        guard at < bytes.count else { throw Unread() }
        return bytes[at]
    }

    private mutating func take() throws -> UInt8 {
        let byte = try peek()
        at += 1
        return byte
    }

    private mutating func expect(_ byte: UInt8) throws {
        guard try take() == byte else { throw Unread() }
    }
}
