import Foundation

/// A dashboard's template variable as Grafana keeps it: how its values go into SQL, what it offers and what is picked.
package struct GrafanaVariable: Sendable {
    /// What is picked: Grafana's "All", or values.
    package enum Pick: Sendable {
        case all
        case values([String])
    }

    package var name: String
    package var multi: Bool
    package var includeAll: Bool
    /// The custom value of "All", inserted as it is.
    package var allValue: String?
    /// The values its query offered: what "All" stands for without a custom value.
    package var options: [String] = []
    package var pick: Pick = .all

    /// The variable a dashboard's `templating.list` entry defines.
    package init(_ definition: [String: Any]) {
        name = definition["name"] as? String ?? ""
        multi = definition["multi"] as? Bool ?? false
        includeAll = definition["includeAll"] as? Bool ?? false
        allValue = (definition["allValue"] as? String).flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The variables of a dashboard, in order.
    package static func variables(of dashboard: [String: Any]) -> [GrafanaVariable] {
        ((dashboard["templating"] as? [String: Any])?["list"] as? [[String: Any]] ?? []).map(GrafanaVariable.init)
    }

    /// What replaces `$name` in a PostgreSQL panel's SQL. Grafana's template service inserts a custom "All" value as it
    /// is (it skips formatting it) and otherwise hands the value(s) to the data source, whose `interpolateVariable`
    /// quotes each value of a multi-value or include-All variable as a literal and joins them with commas, and inserts
    /// any other value with its quotes doubled but no quotes around it.
    package var interpolated: String {
        let values: [String]
        switch pick {
        case .all:
            if let allValue { return allValue }
            values = options
        case .values(let picked):
            guard multi || includeAll else { return (picked.first ?? "").replacingOccurrences(of: "'", with: "''") }
            values = picked
        }
        return values.map { "'" + $0.replacingOccurrences(of: "'", with: "''") + "'" }.joined(separator: ",")
    }
}

/// For tests and `make bench`, which run the dashboards' queries without Grafana: what Grafana does to a PostgreSQL
/// panel's SQL before it runs it: template variables replaced (``GrafanaVariable/interpolated``), then its macros
/// expanded (its postgres macro engine's forms: `$__timeFilter(c)` → `c BETWEEN 'from' AND 'to'`, `$__time(c)` →
/// `c AS "time"`, `$__timeGroupAlias(c, '1d')` → `floor(extract(epoch from c)/86400)*86400 AS "time"`, …).
package enum GrafanaSQL {
    package static func expand(_ sql: String, variables: [GrafanaVariable], range: (from: Date, to: Date)) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let from = formatter.string(from: range.from), to = formatter.string(from: range.to)
        var text = interpolate(sql, variables)
        let pattern = try! NSRegularExpression(pattern: #"\$([_a-zA-Z0-9]+)\(([^\)]*)\)"#)
        while let match = pattern.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) {
            let name = String(text[Range(match.range(at: 1), in: text)!])
            let args = text[Range(match.range(at: 2), in: text)!].split(separator: ",").map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            let replacement: String
            switch name {
            case "__time": replacement = "\(args[0]) AS \"time\""
            case "__timeEpoch": replacement = "extract(epoch from \(args[0])) as \"time\""
            case "__timeFilter": replacement = "\(args[0]) BETWEEN '\(from)' AND '\(to)'"
            case "__timeFrom": replacement = "'\(from)'"
            case "__timeTo": replacement = "'\(to)'"
            case "__timeGroup", "__timeGroupAlias":
                let seconds = interval(args[1].trimmingCharacters(in: CharacterSet(charactersIn: "'")))
                replacement =
                    "floor(extract(epoch from \(args[0]))/\(seconds))*\(seconds)"
                    + (name == "__timeGroupAlias" ? " AS \"time\"" : "")
            case "__unixEpochFilter":
                replacement =
                    "\(args[0]) >= \(Int(range.from.timeIntervalSince1970)) AND \(args[0]) <= \(Int(range.to.timeIntervalSince1970))"
            default: replacement = "unknown_macro_\(name)()"
            }
            text.replaceSubrange(Range(match.range, in: text)!, with: replacement)
        }
        return text
    }

    /// `sql` with each variable's `$name`, `${name}` (with or without a `:format`) and `[[name]]` replaced, in one pass:
    /// an inserted value is never read again.
    package static func interpolate(_ sql: String, _ variables: [GrafanaVariable]) -> String {
        let byName = Dictionary(variables.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let pattern = try! NSRegularExpression(pattern: #"\$\{(\w+)(?::[^}]*)?\}|\$(\w+)|\[\[(\w+)\]\]"#)
        var result = ""
        var rest = sql.startIndex
        for match in pattern.matches(in: sql, range: NSRange(sql.startIndex..., in: sql)) {
            let range = Range(match.range, in: sql)!
            let name = (1...3).lazy.compactMap { Range(match.range(at: $0), in: sql).map { String(sql[$0]) } }.first
            guard let name, let variable = byName[name] else { continue }
            result += sql[rest..<range.lowerBound] + variable.interpolated
            rest = range.upperBound
        }
        return result + sql[rest...]
    }

    /// Seconds in a Grafana interval (`30s`, `5m`, `1h`, `1d`, `1w`).
    package static func interval(_ text: String) -> Int {
        let units = ["s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800]
        guard let unit = text.last.map(String.init), let scale = units[unit], let number = Int(text.dropLast()) else {
            return 86_400
        }
        return number * scale
    }
}
