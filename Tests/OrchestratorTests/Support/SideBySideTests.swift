import Foundation
import OrchestrateModel
import Testing

/// Work over a large array made side by side comes back whole and in order.
@Suite("Side by side")
struct SideBySideTests {
    @Test(
        "slices cover the array once, in order; a short array is one slice", arguments: [0, 1, 99, 100, 1_001, 4_099])
    func slices(count: Int) {
        let numbers = Array(0..<count)
        let slices = numbers.slicedSideBySide(minimumSlice: 100) { Array($0) }
        #expect(slices.flatMap { $0 } == numbers)
        #expect(slices.count == max(1, min(ProcessInfo.processInfo.activeProcessorCount, count / 100)))
        #expect(slices.allSatisfy { !$0.isEmpty } || count == 0)
    }
}
