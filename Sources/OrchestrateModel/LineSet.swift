/// Line numbers of a file as sorted, disjoint ranges, written `1-5,8,10-12`: the lines a test ran, the lines a change
/// touched.
package struct LineSet: Sendable, Hashable, CustomStringConvertible {
    package private(set) var ranges: [ClosedRange<Int>]
    /// The largest line number kept: a report's larger numbers (a hostile one's) are left out, and no sum overflows.
    package static let largest = 1 << 24

    package init<Lines: Sequence<Int>>(lines: Lines) {
        var ranges: [ClosedRange<Int>] = []
        for line in Set(lines).sorted() where line > 0 && line <= Self.largest {
            if let last = ranges.last, last.upperBound == line - 1 {
                ranges[ranges.count - 1] = last.lowerBound...line
            } else {
                ranges.append(line...line)
            }
        }
        self.ranges = ranges
    }

    package init(ranges: [ClosedRange<Int>]) {
        var merged: [ClosedRange<Int>] = []
        for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound })
        where range.upperBound > 0 && range.lowerBound <= Self.largest {
            let range = max(range.lowerBound, 1)...min(range.upperBound, Self.largest)
            if let last = merged.last, range.lowerBound - 1 <= last.upperBound {
                merged[merged.count - 1] = last.lowerBound...max(last.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        self.ranges = merged
    }

    /// `nil` when `text` is not ranges as ``description`` writes them (in any order: two sets written one after the
    /// other read as their union).
    package init?(_ text: Substring) {
        var ranges: [ClosedRange<Int>] = []
        for part in text.split(separator: ",") {
            let bounds = part.split(separator: "-", maxSplits: 1)
            guard let low = bounds.first.flatMap({ Int($0) }), low > 0, low <= Self.largest else { return nil }
            let high = bounds.count == 2 ? Int(bounds[1]) : low
            guard let high, high >= low, high <= Self.largest else { return nil }
            ranges.append(low...high)
        }
        self.init(ranges: ranges)
    }

    package var description: String {
        ranges.map { $0.lowerBound == $0.upperBound ? "\($0.lowerBound)" : "\($0.lowerBound)-\($0.upperBound)" }
            .joined(separator: ",")
    }

    package var isEmpty: Bool { ranges.isEmpty }

    /// Its last line at or before `line`, if any (a binary search).
    package func last(atOrBefore line: Int) -> Int? {
        var low = ranges.startIndex
        var high = ranges.endIndex
        while low < high {
            let middle = (low + high) / 2
            if ranges[middle].lowerBound <= line { low = middle + 1 } else { high = middle }
        }
        guard low > ranges.startIndex else { return nil }
        return min(ranges[low - 1].upperBound, line)
    }

    /// Whether any of its lines is in `range` (a binary search).
    package func intersects(_ range: ClosedRange<Int>) -> Bool {
        var low = ranges.startIndex
        var high = ranges.endIndex
        while low < high {
            let middle = (low + high) / 2
            if ranges[middle].upperBound < range.lowerBound { low = middle + 1 } else { high = middle }
        }
        return low < ranges.endIndex && ranges[low].lowerBound <= range.upperBound
    }
}
