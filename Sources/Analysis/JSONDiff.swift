import OrchestrateModel

/// Field-level differences between two JSON documents, by JSON path: `$.options[0].label: "OK" → "SURE"`.
package enum JSONDiff {
    package struct Change: Sendable, Equatable {
        package var path: String
        /// `nil` where the field is absent.
        package var before: JSONValue?
        package var after: JSONValue?
    }

    package static func changes(_ before: JSONValue, _ after: JSONValue, path: String = "$") -> [Change] {
        switch (before, after) {
        case (.object(let old), .object(let new)):
            return Set(old.keys).union(new.keys).sorted().flatMap { key -> [Change] in
                let child = path + member(key)
                switch (old[key], new[key]) {
                case (let a?, let b?): return changes(a, b, path: child)
                case (let a, let b): return [Change(path: child, before: a, after: b)]
                }
            }
        case (.array(let old), .array(let new)):
            return (0..<max(old.count, new.count)).flatMap { index -> [Change] in
                let child = "\(path)[\(index)]"
                if index < old.count, index < new.count { return changes(old[index], new[index], path: child) }
                return [
                    Change(
                        path: child, before: index < old.count ? old[index] : nil,
                        after: index < new.count ? new[index] : nil)
                ]
            }
        case (.integer(let a), .number(let b)) where Double(a) == b: return []
        case (.number(let a), .integer(let b)) where a == Double(b): return []
        default:
            return before == after ? [] : [Change(path: path, before: before, after: after)]
        }
    }

    /// `.name`, or `['odd key']` for keys that are not plain identifiers.
    static func member(_ key: String) -> String {
        let plain =
            !key.isEmpty
            && key.unicodeScalars.allSatisfy { $0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" }
            && !("0"..."9").contains(key.unicodeScalars.first!)
        return plain ? ".\(key)" : "['\(key.replacing("\\", with: "\\\\").replacing("'", with: "\\'"))']"
    }

    /// Compact JSON text of a value (keys sorted), `absent` for a missing one.
    package static func render(_ value: JSONValue?) -> String {
        guard let value else { return "absent" }
        switch value {
        case .null: return "null"
        case .bool(let flag): return flag ? "true" : "false"
        case .integer(let number): return "\(number)"
        case .number(let number): return "\(number)"
        case .string(let text): return quote(text)
        case .array(let items): return "[" + items.map { render($0) }.joined(separator: ",") + "]"
        case .object(let members):
            return "{" + members.keys.sorted().map { "\(quote($0)):\(render(members[$0]))" }.joined(separator: ",")
                + "}"
        }
    }

    private static func quote(_ text: String) -> String { "\"" + JSONValue.escaped(text) + "\"" }
}
