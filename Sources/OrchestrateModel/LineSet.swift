/// Line numbers of a file as sorted, disjoint ranges, written `1-5,8,10-12`: the lines a test ran, the lines a change
/// touched.
package struct LineSet: Sendable, Hashable, CustomStringConvertible {
    package private(set) var ranges: [ClosedRange<Int>]
    /// The largest line number kept: a report's larger numbers (a hostile one's) are left out, and no sum overflows.
    package static let largest = 1 << 24

    package init<Lines: Sequence<Int>>(lines: Lines) {
        self.init(ranges: lines.map { $0...$0 })
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
        let low = ranges.partitioningIndex { $0.lowerBound > line }
        guard low > ranges.startIndex else { return nil }
        return min(ranges[low - 1].upperBound, line)
    }

    /// Whether any of its lines is in `range` (a binary search).
    package func intersects(_ range: ClosedRange<Int>) -> Bool {
        let low = ranges.partitioningIndex { $0.upperBound >= range.lowerBound }
        return low < ranges.endIndex && ranges[low].lowerBound <= range.upperBound
    }
}

extension RandomAccessCollection {
    /// The first index whose element meets `belongs`, in a collection where every element that does follows every
    /// element that does not (`endIndex` when none does): a binary search.
    package func partitioningIndex(where belongs: (Element) throws -> Bool) rethrows -> Index {
        var low = startIndex
        var count = self.count
        while count > 0 {
            let half = count / 2
            let middle = index(low, offsetBy: half)
            if try belongs(self[middle]) {
                count = half
            } else {
                low = index(after: middle)
                count -= half + 1
            }
        }
        return low
    }
}
