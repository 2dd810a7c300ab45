import Foundation
import OrchestrateModel

/// The pictures of the HTML report, as inline SVG made here (the page runs no script): the run's timeline, a scenario's
/// duration against its expected one, and its trend over its recent attempts.
enum RunTimeline {
    /// One worker slot's lane: the slot of one process of one host.
    struct Lane: Hashable, Comparable {
        var host: String
        var process: String
        var slot: Int

        static func < (lhs: Lane, rhs: Lane) -> Bool {
            (lhs.host, lhs.process, lhs.slot) < (rhs.host, rhs.process, rhs.slot)
        }

        /// The lane of a stored worker (`host/pid/slot`); `nil` for none.
        init?(worker: String?) {
            guard let worker else { return nil }
            let parts = worker.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count >= 3, let slot = Int(parts[parts.count - 1]) else { return nil }
            host = parts[..<(parts.count - 2)].joined(separator: "/")
            process = String(parts[parts.count - 2])
            self.slot = slot
        }
    }

    static let width = 960.0
    static let labelWidth = 150.0
    static let laneHeight = 14.0
    static let laneGap = 4.0
    static let hostGap = 10.0

    /// One lane per slot, grouped by host (a heading per host), one bar per attempt coloured by its outcome, a line
    /// from each failed attempt to its retry, and each lane's idle tail to the run's end shaded: the straggler is the
    /// lane whose bar ends last, the idle tail the shading after the others. `nil` when no attempt ran.
    static func svg(_ report: RunReport) -> String? {
        let ran = report.scenarios.flatMap { entry in
            entry.attempts.compactMap { attempt -> (RunReport.ScenarioEntry, AttemptRecord, Lane, Date, Date)? in
                guard let lane = Lane(worker: attempt.worker), let start = attempt.startedAt else { return nil }
                let end =
                    attempt.finishedAt ?? start.addingTimeInterval(Double(attempt.durationMilliseconds ?? 0) / 1000)
                return (entry, attempt, lane, start, max(end, start))
            }
        }
        guard let first = ran.map(\.3).min(), let last = ran.map(\.4).max() else { return nil }
        let end = max(last, report.finishedAt ?? last)
        let span = max(end.timeIntervalSince(first), 0.001)
        let lanes = Set(ran.map(\.2)).sorted()
        var y: [Lane: Double] = [:]
        var headings: [(String, Double)] = []
        var cursor = 0.0
        for lane in lanes {
            if headings.last?.0 != lane.host {
                cursor += headings.isEmpty ? 0 : hostGap
                headings.append((lane.host, cursor))
                cursor += laneHeight + laneGap
            }
            y[lane] = cursor
            cursor += laneHeight + laneGap
        }
        let height = cursor + 22
        func x(_ date: Date) -> Double { labelWidth + (width - labelWidth - 10) * date.timeIntervalSince(first) / span }
        var svg =
            "<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(Int(width)) \(Int(height))\" "
        svg +=
            "width=\"\(Int(width))\" height=\"\(Int(height))\" role=\"img\" aria-label=\"timeline of the run's attempts\">\n"
        for (host, top) in headings {
            svg +=
                "<text class=\"host\" x=\"0\" y=\"\(format(top + laneHeight - 3))\">\(HTMLReport.escape(host))</text>\n"
        }
        let processes = Dictionary(grouping: lanes, by: \.host).mapValues { Set($0.map(\.process)).count }
        var lastEnd: [Lane: Date] = [:]
        for item in ran { lastEnd[item.2] = max(lastEnd[item.2] ?? item.4, item.4) }
        for lane in lanes {
            let top = y[lane]!
            let label =
                (processes[lane.host] ?? 1) > 1 ? "pid \(lane.process) · slot \(lane.slot)" : "slot \(lane.slot)"
            svg +=
                "<text class=\"lane\" x=\"12\" y=\"\(format(top + laneHeight - 3))\">\(HTMLReport.escape(label))</text>\n"
            if let tail = lastEnd[lane], end.timeIntervalSince(tail) > 0 {
                svg +=
                    "<rect class=\"idle\" x=\"\(format(x(tail)))\" y=\"\(format(top))\" width=\"\(format(x(end) - x(tail)))\" "
                svg +=
                    "height=\"\(format(laneHeight))\"><title>idle for the last \(seconds(end.timeIntervalSince(tail)))</title></rect>\n"
            }
        }
        // Bars, and where each attempt's bar is, for the retry links.
        var bars: [Int64: (x0: Double, x1: Double, y: Double)] = [:]
        for (entry, attempt, lane, start, finish) in ran {
            let top = y[lane]!
            let x0 = x(start), w = max(x(finish) - x0, 1)
            bars[attempt.id] = (x0, x0 + w, top + laneHeight / 2)
            let outcome = attempt.outcome?.rawValue ?? "running"
            let title =
                "\(entry.scenario.name) · \(AttemptName.of(attempt: attempt.attempt, lane: attempt.lane)) · \(outcome) · "
                + seconds(finish.timeIntervalSince(start))
                + (entry.expectedMilliseconds.map { " (expected \(seconds(Double($0) / 1000)))" } ?? "")
            svg +=
                "<rect class=\"bar \(outcome)\" x=\"\(format(x0))\" y=\"\(format(top))\" width=\"\(format(w))\" height=\"\(format(laneHeight))\">"
            svg += "<title>\(HTMLReport.escape(title))</title></rect>\n"
        }
        for entry in report.scenarios {
            for (failed, retry) in zip(entry.attempts, entry.attempts.dropFirst()) where failed.lane == retry.lane {
                guard let from = bars[failed.id], let to = bars[retry.id] else { continue }
                svg +=
                    "<line class=\"retry\" x1=\"\(format(from.x1))\" y1=\"\(format(from.y))\" x2=\"\(format(to.x0))\" y2=\"\(format(to.y))\"/>\n"
            }
        }
        svg += "<text class=\"axis\" x=\"\(Int(labelWidth))\" y=\"\(format(height - 6))\">0 s</text>"
        svg +=
            "<text class=\"axis\" x=\"\(Int(width - 10))\" y=\"\(format(height - 6))\" text-anchor=\"end\">\(seconds(span))</text>\n"
        svg += "</svg>"
        return svg
    }

    /// What a scenario took in this run, to set against its expected time (the median of single passing attempts): its
    /// last attempt's duration — of the longer lane in a compare run.
    static func settledMilliseconds(_ entry: RunReport.ScenarioEntry) -> Int64 {
        Dictionary(grouping: entry.attempts, by: \.lane).values.compactMap { $0.last?.durationMilliseconds }.max() ?? 0
    }

    /// The scenario's time in this run against what was expected of it: two bars on one scale.
    static func againstExpected(actual: Int64, expected: Int64?) -> String {
        guard let expected, expected > 0 else { return "" }
        let scale = 60.0 / Double(max(actual, expected))
        let ratio = Double(actual) / Double(expected)
        var svg =
            "<svg class=\"versus\" xmlns=\"http://www.w3.org/2000/svg\" width=\"64\" height=\"10\" viewBox=\"0 0 64 10\">"
        svg += "<rect class=\"expected\" x=\"0\" y=\"0\" width=\"\(format(Double(expected) * scale))\" height=\"4\"/>"
        svg +=
            "<rect class=\"actual\(ratio > 1.5 ? " slow" : "")\" x=\"0\" y=\"5\" width=\"\(format(max(Double(actual) * scale, 1)))\" height=\"4\"/>"
        svg +=
            "<title>\(seconds(Double(actual) / 1000)) against \(seconds(Double(expected) / 1000)) expected</title></svg>"
        return svg + " ×" + decimal(ratio, places: 2)
    }

    /// The scenario's recent attempts, oldest first: one bar each, as tall as it took, coloured by whether it passed.
    static func trend(_ points: [TrendPoint]) -> String {
        guard !points.isEmpty else { return "" }
        let longest = Double(max(points.map(\.milliseconds).max() ?? 1, 1))
        var svg =
            "<svg class=\"trend\" xmlns=\"http://www.w3.org/2000/svg\" width=\"\(points.count * 4)\" height=\"14\" "
        svg += "viewBox=\"0 0 \(points.count * 4) 14\">"
        // One path per colour, a bar per attempt (`M x 14 v -h h 3 v h z`): a tenth of the bytes of a rectangle each.
        var paths = (passed: "", failed: "")
        for (index, point) in points.enumerated() {
            let bar = "M\(index * 4) 14v-\(format(max(14 * Double(point.milliseconds) / longest, 2)))h3V14z"
            if point.passed { paths.passed += bar } else { paths.failed += bar }
        }
        if !paths.passed.isEmpty { svg += "<path class=\"passed\" d=\"\(paths.passed)\"/>" }
        if !paths.failed.isEmpty { svg += "<path class=\"failed\" d=\"\(paths.failed)\"/>" }
        let passed = points.filter(\.passed).count
        svg += "<title>last \(points.count) attempts: \(passed) passed</title></svg>"
        return svg
    }

    /// `value` with one decimal, as SVG coordinates are written: tens of thousands of them in a large run's report,
    /// where `String(format:)` took most of the page's time.
    static func format(_ value: Double) -> String { decimal(value, places: 1) }

    static func seconds(_ value: Double) -> String { decimal(value, places: value < 10 ? 2 : 1) + " s" }

    /// `value` rounded to `places` (1 or 2) decimals.
    static func decimal(_ value: Double, places: Int) -> String {
        let scale = places == 1 ? 10 : 100
        guard value.isFinite, abs(value) < 1e12 else { return "0" }
        let scaled = Int((value * Double(scale)).rounded())
        let whole = abs(scaled) / scale, fraction = abs(scaled) % scale
        let digits = places == 2 && fraction < 10 ? "0\(fraction)" : "\(fraction)"
        return (scaled < 0 ? "-" : "") + "\(whole).\(digits)"
    }
}
