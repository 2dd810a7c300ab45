import Foundation

/// A request as the mock server received it: `/api.example.com/v1/x?y=1` addresses host
/// `api.example.com`, path `/v1/x`, query `y=1`.
package struct MockRequest: Sendable {
    package var method: String
    /// The first path component of the mock URL: the host the app meant.
    package var host: String
    /// The path on that host, starting with `/`.
    package var path: String
    /// The query as sent (percent-encoded), without `?`; empty when there is none.
    package var rawQuery: String
    package var headers: [(name: String, value: String)]
    package var body: [UInt8]

    package init(
        method: String, host: String, path: String, rawQuery: String, headers: [(name: String, value: String)],
        body: [UInt8]
    ) {
        self.method = method
        self.host = host
        self.path = path
        self.rawQuery = rawQuery
        self.headers = headers
        self.body = body
    }

    /// Splits a mock URI (`/host/path?query`); `nil` host when the URI has no first path component.
    package init(method: String, uri: String, headers: [(name: String, value: String)], body: [UInt8]) {
        // Over the UTF-8 bytes ('/' and '?' are ASCII): splitting by Characters is slow, and this runs for every
        // request.
        let bytes = uri.utf8
        let slash = UInt8(ascii: "/")
        let pathEnd = bytes.firstIndex(of: UInt8(ascii: "?")) ?? bytes.endIndex
        let query = pathEnd == bytes.endIndex ? "" : String(uri[bytes.index(after: pathEnd)...])
        var hostStart = bytes.startIndex
        while hostStart < pathEnd, bytes[hostStart] == slash { bytes.formIndex(after: &hostStart) }
        let hostEnd = bytes[hostStart..<pathEnd].firstIndex(of: slash) ?? pathEnd
        let host = uri[hostStart..<hostEnd]
        let rest = uri[hostEnd..<pathEnd]
        // Already upper (lower) case, as nearly every request is: no conversion.
        let upperMethod =
            method.utf8.contains { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) } ? method.uppercased() : method
        let lowerHost = String(host).lowercasedASCII
        self.init(
            method: upperMethod, host: lowerHost, path: rest.isEmpty ? "/" : String(rest),
            rawQuery: query, headers: headers, body: body)
    }

    /// The first value of a header (names are case-insensitive).
    package func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// How the request reads in messages: `GET /api.example.com/v1/x?y=1`.
    package var summary: String { "\(method) /\(host)\(path)\(rawQuery.isEmpty ? "" : "?\(rawQuery)")" }

    /// Decoded query pairs in order (`a=1&b` → `[("a", "1"), ("b", "")]`).
    package static func queryItems(_ rawQuery: String) -> [(name: String, value: String)] {
        guard !rawQuery.isEmpty else { return [] }
        return rawQuery.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ text: Substring) -> String {
                text.utf8.contains(UInt8(ascii: "+"))
                    ? text.replacingOccurrences(of: "+", with: " ").percentDecoded : text.percentDecoded
            }
            return (decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
        }
    }
}

extension StringProtocol {
    /// Percent-decoded (the text itself when it is not validly encoded); text without `%` skips
    /// Foundation, which is slow at it, as it runs for every request.
    var percentDecoded: String {
        utf8.contains(UInt8(ascii: "%")) ? (removingPercentEncoding ?? String(self)) : String(self)
    }
}
