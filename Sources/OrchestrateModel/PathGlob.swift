/// A pattern of paths relative to a repository's root, as `.gitignore` writes them: `*` and `?` within one component,
/// `**` for any number of components, a trailing `/` for everything under a folder; a pattern without a slash matches
/// a name in any folder (`*.md`).
package struct PathGlob: Sendable, Hashable, CustomStringConvertible {
    package let description: String
    private let components: [[Character]]

    package init(_ pattern: String) {
        description = pattern
        var text = Substring(pattern)
        while text.hasPrefix("./") { text = text.dropFirst(2) }
        if text.hasPrefix("/") {
            text = text.drop { $0 == "/" }
        } else if !text.dropLast().contains("/") {
            // A name alone: in any folder.
            text = "**/" + text
        }
        if text.hasSuffix("/") { text += "**" }
        components = text.split(separator: "/").map(Array.init)
    }

    /// Whether `path` (relative, `/`-separated) is one the pattern names.
    package func matches(_ path: String) -> Bool {
        Self.matches(path.split(separator: "/").map(Array.init)[...], components[...])
    }

    /// Components against components, `**` taking none or more; each `**` tries each split once per position, so a
    /// pattern of many `**` against a deep path stays polynomial.
    private static func matches(_ path: ArraySlice<[Character]>, _ pattern: ArraySlice<[Character]>) -> Bool {
        // reachable[i]: the pattern's components so far match the path's first i components.
        var reachable = [Bool](repeating: false, count: path.count + 1)
        reachable[0] = true
        for part in pattern {
            var next = [Bool](repeating: false, count: path.count + 1)
            if part == ["*", "*"] {
                var any = false
                for index in reachable.indices {
                    any = any || reachable[index]
                    next[index] = any
                }
            } else {
                for index in path.indices where reachable[index - path.startIndex] {
                    if component(path[index], matches: part) { next[index - path.startIndex + 1] = true }
                }
            }
            reachable = next
        }
        return reachable[path.count]
    }

    /// One component against one with `*` and `?` (a table over the two, never backtracking).
    package static func component(_ name: [Character], matches pattern: [Character]) -> Bool {
        var reachable = [Bool](repeating: false, count: name.count + 1)
        reachable[0] = true
        for character in pattern {
            var next = [Bool](repeating: false, count: name.count + 1)
            switch character {
            case "*":
                var any = false
                for index in reachable.indices {
                    any = any || reachable[index]
                    next[index] = any
                }
            default:
                for index in name.indices where reachable[index] && (character == "?" || name[index] == character) {
                    next[index + 1] = true
                }
            }
            reachable = next
        }
        return reachable[name.count]
    }
}

/// An endpoint pattern (`POST api.x.test/v1/carts/*`, or without a method for every one): the method, then the host
/// and path as a ``PathGlob`` over the endpoints footprints record (`GET api.x.test/v1/carts/{id}`).
package struct EndpointPattern: Sendable, Hashable, CustomStringConvertible {
    package let description: String
    private let method: String?
    private let path: PathGlob

    /// `nil` when `text` is no endpoint pattern (empty, or a method with nothing after it).
    package init?(_ text: String) {
        let parts = text.split(separator: " ", omittingEmptySubsequences: true)
        guard (1...2).contains(parts.count) else { return nil }
        if parts.count == 2 {
            guard parts[0].allSatisfy({ $0.isLetter && $0.isUppercase }) else { return nil }
            method = String(parts[0])
        } else {
            method = nil
        }
        let target = parts[parts.count - 1]
        guard !target.hasPrefix("/"), !target.isEmpty else { return nil }
        description = text
        path = PathGlob("/" + target)
    }

    /// Whether a recorded endpoint (`GET api.x.test/v1/carts/{id}`) is one the pattern names.
    package func matches(_ endpoint: String) -> Bool {
        guard let space = endpoint.firstIndex(of: " ") else { return false }
        if let method, endpoint[..<space] != method { return false }
        return path.matches(String(endpoint[endpoint.index(after: space)...]))
    }
}
