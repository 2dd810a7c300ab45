/// A pattern of paths relative to a repository's root, as `.gitignore` writes them: `*` and `?` within one component,
/// `**` for any number of components, a trailing `/` for everything under a folder; a pattern without a slash matches
/// a name in any folder (`*.md`).
package struct PathGlob: Sendable, Hashable, CustomStringConvertible {
    package let description: String
    /// `nil`: a pattern of nothing.
    private let components: [[Character]]?

    /// `.` and `..` are worked out in the pattern's text (`sub/../server/**` is `server/**`); a pattern of nothing
    /// (empty, `.`, `/`) matches nothing.
    package init(_ pattern: String) {
        description = pattern
        let anchored = pattern.hasPrefix("/") || pattern.dropLast().contains("/")
        var parts: [Substring] = []
        for part in pattern.split(separator: "/") where part != "." {
            if part == "..", let last = parts.last, last != "..", last != "**" {
                parts.removeLast()
            } else {
                parts.append(part)
            }
        }
        guard !parts.isEmpty else {
            components = nil
            return
        }
        // A name alone: in any folder.
        if !anchored { parts.insert("**", at: 0) }
        if pattern.hasSuffix("/") { parts.append("**") }
        components = parts.map(Array.init)
    }

    /// Whether the pattern is one of nothing (empty, `.`, `/`, `sub/..`): it matches no path.
    package var namesNothing: Bool { components == nil }

    /// Whether `path` (relative, `/`-separated) is one the pattern names.
    package func matches(_ path: String) -> Bool {
        guard let components else { return false }
        return Self.matches(path.split(separator: "/").map(Array.init)[...], components[...])
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
    /// The one endpoint of a footprint that called more endpoints than a footprint keeps: it stands for all of them.
    package static let every = "*"

    package let description: String
    private let method: String?
    private let path: PathGlob

    /// `nil` when `text` is no endpoint pattern: empty, a method with nothing after it, a URL (`https://…`) or a path
    /// without its host.
    package init?(_ text: String) {
        let parts = text.split(separator: " ", omittingEmptySubsequences: true)
        guard (1...2).contains(parts.count), let target = parts.last else { return nil }
        func isMethod(_ word: Substring) -> Bool { word.allSatisfy { $0.isLetter && $0.isUppercase } }
        if parts.count == 2 {
            guard isMethod(parts[0]) else { return nil }
            method = String(parts[0])
        } else {
            guard !isMethod(target) else { return nil }
            method = nil
        }
        let host = target.prefix { $0 != "/" }
        guard !host.isEmpty, !target.contains("://") else { return nil }
        description = text
        path = PathGlob("/" + host.lowercased() + target.dropFirst(host.count))
    }

    /// Whether a recorded endpoint (`GET api.x.test/v1/carts/{id}`) is one the pattern names; hosts compare without
    /// case, as DNS does. ``every`` is every endpoint.
    package func matches(_ endpoint: String) -> Bool {
        if endpoint == Self.every { return true }
        guard let space = endpoint.firstIndex(of: " ") else { return false }
        if let method, endpoint[..<space] != method { return false }
        let target = endpoint[endpoint.index(after: space)...]
        let host = target.prefix { $0 != "/" }
        return path.matches(host.lowercased() + target.dropFirst(host.count))
    }
}
