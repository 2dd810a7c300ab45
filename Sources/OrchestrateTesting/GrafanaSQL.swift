import Foundation

/// For tests and `make bench`, which run the dashboards' queries without Grafana: what Grafana does to a PostgreSQL
/// panel's SQL before it runs it: template variables replaced, then its macros
/// expanded (its postgres macro engine's forms: `$__timeFilter(c)` → `c BETWEEN 'from' AND 'to'`, `$__time(c)` →
/// `c AS "time"`, `$__timeGroupAlias(c, '1d')` → `floor(extract(epoch from c)/86400)*86400 AS "time"`, …).
package enum GrafanaSQL {
    package static func expand(_ sql: String, project: String, branch: String, range: (from: Date, to: Date)) -> String
    {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let from = formatter.string(from: range.from), to = formatter.string(from: range.to)
        var text = sql.replacingOccurrences(of: "$project", with: project).replacingOccurrences(
            of: "$branch", with: branch)
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

    /// Seconds in a Grafana interval (`30s`, `5m`, `1h`, `1d`, `1w`).
    package static func interval(_ text: String) -> Int {
        let units = ["s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800]
        guard let unit = text.last.map(String.init), let scale = units[unit], let number = Int(text.dropLast()) else {
            return 86_400
        }
        return number * scale
    }
}
