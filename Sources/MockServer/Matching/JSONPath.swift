import Foundation
import OrchestrateModel

/// The part of JSONPath that names fields to ignore or redact: `$.a.b`, `$['a b']`, `$.list[0]`,
/// `$.list[*].id` and `$..token` (a field at any depth).
package struct JSONPath: Sendable, Hashable, CustomStringConvertible {
    enum Component: Sendable, Hashable {
        case member(String)
        case index(Int)
        case wildcard
        case descendant(String)
    }

    let components: [Component]
    package let description: String

    package init(_ text: String) throws(StubError) {
        description = text
        var components: [Component] = []
        var rest = Substring(text)
        guard rest.first == "$" else {
            throw StubError(path: text, message: "a JSON path starts with $ (as in $.token)")
        }
        rest = rest.dropFirst()
        func name(_ text: inout Substring) -> String {
            let end = text.firstIndex { $0 == "." || $0 == "[" } ?? text.endIndex
            defer { text = text[end...] }
            return String(text[..<end])
        }
        while let first = rest.first {
            if rest.hasPrefix("..") {
                rest = rest.dropFirst(2)
                let member = name(&rest)
                guard !member.isEmpty else { throw StubError(path: text, message: "a name must follow ..") }
                components.append(.descendant(member))
            } else if first == "." {
                rest = rest.dropFirst()
                let member = name(&rest)
                guard !member.isEmpty else { throw StubError(path: text, message: "a name must follow .") }
                components.append(member == "*" ? .wildcard : .member(member))
            } else if first == "[", let quote = rest.dropFirst().first, quote == "'" || quote == "\"" {
                // A quoted name, which may hold `]` and, escaped with a backslash, its quote or a backslash.
                var name = ""
                var index = rest.index(rest.startIndex, offsetBy: 2)
                var closed = false
                while index < rest.endIndex {
                    let character = rest[index]
                    index = rest.index(after: index)
                    if character == "\\", index < rest.endIndex {
                        name.append(rest[index])
                        index = rest.index(after: index)
                    } else if character == quote {
                        closed = true
                        break
                    } else {
                        name.append(character)
                    }
                }
                guard closed, index < rest.endIndex, rest[index] == "]" else {
                    throw StubError(path: text, message: "a quoted name must end with its quote and ]")
                }
                rest = rest[rest.index(after: index)...]
                components.append(.member(name))
            } else if first == "[" {
                guard let close = rest.firstIndex(of: "]") else { throw StubError(path: text, message: "[ without ]") }
                let inside = rest[rest.index(after: rest.startIndex)..<close].trimmingCharacters(in: .whitespaces)
                rest = rest[rest.index(after: close)...]
                if inside == "*" {
                    components.append(.wildcard)
                } else if let index = Int(inside) {
                    components.append(.index(index))
                } else if inside.count >= 2, let quote = inside.first, quote == "'" || quote == "\"",
                    inside.last == quote
                {
                    components.append(.member(String(inside.dropFirst().dropLast())))
                } else {
                    throw StubError(path: text, message: "[\(inside)] is neither an index, * nor a quoted name")
                }
            } else {
                throw StubError(path: text, message: "unexpected \"\(first)\"")
            }
        }
        self.components = components
    }

    /// Whether the path names `concrete` (a path to one value, as differences name them: `$.items[3].at`) or a value
    /// that holds it: `$.items[*].at`, `$..at` and `$.items` all name `$.items[3].at`. A concrete path that does not
    /// parse is named by nothing.
    package func names(_ concrete: String) -> Bool {
        guard let parsed = try? JSONPath(concrete) else { return false }
        return Self.names(components[...], parsed.components[...])
    }

    private static func names(_ pattern: ArraySlice<Component>, _ path: ArraySlice<Component>) -> Bool {
        guard let first = pattern.first else { return true }
        switch first {
        case .descendant(let name):
            // Any number of steps down, then the member.
            return path.indices.contains { index in
                path[index] == .member(name) && names(pattern.dropFirst(), path[(index + 1)...])
            }
        case .wildcard:
            guard let step = path.first, step != .wildcard else { return false }
            return names(pattern.dropFirst(), path.dropFirst())
        case .member, .index:
            guard path.first == first else { return false }
            return names(pattern.dropFirst(), path.dropFirst())
        }
    }

    /// The name of the field the path ends in (`password` of `$.user.password` and of `$..password`); `nil` when it
    /// ends in an index or a wildcard.
    var lastName: String? {
        switch components.last {
        case .member(let name)?, .descendant(let name)?: name
        default: nil
        }
    }

    /// Applies `change` to every value the path names (`nil` in, member absent; `nil` out, member removed).
    /// Returns whether anything was named.
    @discardableResult
    package func apply(to value: inout JSONValue, _ change: (JSONValue) -> JSONValue?) -> Bool {
        guard !components.isEmpty else { return false }
        return Self.apply(components[...], to: &value, change)
    }

    private static func apply(
        _ components: ArraySlice<Component>, to value: inout JSONValue, _ change: (JSONValue) -> JSONValue?
    ) -> Bool {
        guard let component = components.first else { return false }
        let rest = components.dropFirst()
        var found = false
        func visit(_ child: inout JSONValue) -> Bool {
            Self.apply(rest, to: &child, change)
        }
        switch (component, value) {
        case (.member(let name), .object(var members)):
            guard var child = members[name] else { return false }
            if rest.isEmpty {
                members[name] = change(child)
                found = true
            } else {
                found = visit(&child)
                members[name] = child
            }
            value = .object(members)
        case (.index(let index), .array(var items)):
            let position = index < 0 ? items.count + index : index
            guard items.indices.contains(position) else { return false }
            if rest.isEmpty {
                if let changed = change(items[position]) {
                    items[position] = changed
                } else {
                    items.remove(at: position)
                }
                found = true
            } else {
                found = visit(&items[position])
            }
            value = .array(items)
        case (.wildcard, .array(var items)):
            if rest.isEmpty {
                items = items.compactMap(change)
                found = !items.isEmpty
            } else {
                for position in items.indices { found = visit(&items[position]) || found }
            }
            value = .array(items)
        case (.wildcard, .object(var members)):
            for key in members.keys {
                if rest.isEmpty {
                    members[key] = change(members[key]!)
                    found = true
                } else {
                    found = visit(&members[key]!) || found
                }
            }
            value = .object(members)
        case (.descendant(let name), .object(var members)):
            for key in members.keys.sorted() {
                if key == name {
                    if rest.isEmpty {
                        members[key] = change(members[key]!)
                        found = true
                        continue
                    }
                    found = visit(&members[key]!) || found
                }
                if members[key] != nil { found = apply(components, to: &members[key]!, change) || found }
            }
            value = .object(members)
        case (.descendant, .array(var items)):
            for position in items.indices { found = apply(components, to: &items[position], change) || found }
            value = .array(items)
        default:
            return false
        }
        return found
    }
}
