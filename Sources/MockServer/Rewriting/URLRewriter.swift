import Foundation

/// Turns absolute URLs of configured hosts into mock URLs, so that the app follows links, redirects and
/// pagination back through the mock server: `https://api.clinic.example/v1/x` (the upstream of
/// `api.clinic.test`) becomes `http://127.0.0.1:PORT/api.clinic.test/v1/x`.
///
/// URLs are found as whole tokens: a URL of another host stays untouched, and so does everything inside
/// it — a configured URL in its query parameter included. JSON's escaped slashes (`https:\/\/`) are
/// understood and kept.
struct URLRewriter: Sendable {
    /// Scheme and authority as they appear in bodies (`https://api.clinic.example`, lower-cased) → host key.
    private let origins: [(origin: [UInt8], host: String)]

    init(hosts: [String: String]) {
        var origins: [(origin: [UInt8], host: String)] = []
        for (host, upstream) in hosts {
            var origin = upstream.lowercased()
            if let schemeEnd = origin.range(of: "://"), let slash = origin[schemeEnd.upperBound...].firstIndex(of: "/")
            {
                origin = String(origin[..<slash])
            }
            origins.append((Array(origin.utf8), host))
            // The name the app uses, should a backend ever answer with it.
            for scheme in ["http://", "https://"] where "\(scheme)\(host)" != origin {
                origins.append((Array("\(scheme)\(host)".utf8), host))
            }
        }
        // Longest first, so that `https://a.example:8443` wins over `https://a.example`.
        self.origins = origins.sorted { $0.origin.count > $1.origin.count }
    }

    var isEmpty: Bool { origins.isEmpty }

    /// The text with every configured URL rewritten to `mockBase` (`http://127.0.0.1:PORT`); `nil` when
    /// nothing was rewritten.
    func rewrite(_ text: [UInt8], mockBase: String) -> [UInt8]? {
        guard !origins.isEmpty, text.count >= 7 else { return nil }
        var output: [UInt8] = []
        var copied = 0
        var index = 0
        var changed = false
        while index < text.count {
            guard text[index] == UInt8(ascii: "h"), let schemeEnd = Self.schemeEnd(text, at: index) else {
                index += 1
                continue
            }
            let escaped = text[index..<schemeEnd].contains(UInt8(ascii: "\\"))
            let end = Self.tokenEnd(text, from: schemeEnd, escaped: escaped)
            if let (origin, host) = match(text, start: index, schemeEnd: schemeEnd, end: end, escaped: escaped) {
                output.append(contentsOf: text[copied..<index])
                let replacement =
                    escaped ? "\(mockBase)/\(host)".replacingOccurrences(of: "/", with: "\\/") : "\(mockBase)/\(host)"
                output.append(contentsOf: replacement.utf8)
                copied = index + origin
                changed = true
            }
            index = end
        }
        guard changed else { return nil }
        output.append(contentsOf: text[copied...])
        return output
    }

    /// Rewrites the headers that carry URLs (Location, Content-Location, Link, Refresh).
    func rewrite(headers: [(name: String, value: String)], mockBase: String) -> [(name: String, value: String)] {
        headers.map { header in
            switch header.name.lowercased() {
            case "location", "content-location", "link", "refresh":
                let rewritten = rewrite(Array(header.value.utf8), mockBase: mockBase).map {
                    String(decoding: $0, as: UTF8.self)
                }
                return (header.name, rewritten ?? header.value)
            default:
                return header
            }
        }
    }

    /// The length of the configured origin at `start` when the URL's authority is exactly one of them.
    private func match(_ text: [UInt8], start: Int, schemeEnd: Int, end: Int, escaped: Bool) -> (Int, String)? {
        // Compare with `\/` read as `/`, lower-cased; the origin must end where the authority ends.
        var normalized: [UInt8] = []
        var lengths: [Int] = []
        var position = start
        while position < end {
            if escaped, text[position] == UInt8(ascii: "\\"), position + 1 < end,
                text[position + 1] == UInt8(ascii: "/")
            {
                normalized.append(UInt8(ascii: "/"))
                position += 2
            } else {
                let byte = text[position]
                normalized.append(byte >= 65 && byte <= 90 ? byte + 32 : byte)
                position += 1
            }
            lengths.append(position - start)
        }
        for (origin, host) in origins where normalized.count >= origin.count && normalized.starts(with: origin) {
            if normalized.count > origin.count {
                let next = normalized[origin.count]
                guard next == UInt8(ascii: "/") || next == UInt8(ascii: "?") || next == UInt8(ascii: "#") else {
                    continue
                }
            }
            return (lengths[origin.count - 1], host)
        }
        return nil
    }

    /// Where `http://`, `https://` or their JSON-escaped forms end, when one starts at `index`.
    private static func schemeEnd(_ text: [UInt8], at index: Int) -> Int? {
        for scheme in schemes where text.count - index >= scheme.count {
            var matches = true
            for (offset, byte) in scheme.enumerated() {
                let actual = text[index + offset]
                if actual != byte && !(byte >= 97 && byte <= 122 && actual == byte - 32) {
                    matches = false
                    break
                }
            }
            if matches { return index + scheme.count }
        }
        return nil
    }

    private static let schemes: [[UInt8]] = ["https://", "http://", "https:\\/\\/", "http:\\/\\/"].map {
        Array($0.utf8)
    }

    /// The end of a URL token: the first byte that cannot be part of a URL.
    private static func tokenEnd(_ text: [UInt8], from index: Int, escaped: Bool) -> Int {
        var position = index
        while position < text.count {
            let byte = text[position]
            if byte == UInt8(ascii: "\\") && escaped && position + 1 < text.count
                && text[position + 1] == UInt8(ascii: "/")
            {
                position += 2
                continue
            }
            if byte <= 0x20 || byte >= 0x7f || stops.contains(byte) { break }
            position += 1
        }
        return position
    }

    private static let stops: Set<UInt8> = Set("\"'<>\\`{}|^".utf8)
}
