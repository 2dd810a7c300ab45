import Foundation
import Synchronization

extension Array where Element: Sendable {
    /// `transform` of consecutive slices of the array, side by side on the machine's cores, the results in the slices'
    /// order: for CPU-bound work over many independent elements (reading a large event stream, writing a large run's
    /// report). Slices have at least `minimumSlice` elements, so a short array is one slice, on the calling thread.
    package func slicedSideBySide<T: Sendable>(
        minimumSlice: Int, _ transform: @Sendable (ArraySlice<Element>) -> T
    ) -> [T] {
        let slices = Swift.min(
            ProcessInfo.processInfo.activeProcessorCount, Swift.max(count / Swift.max(minimumSlice, 1), 1))
        guard slices > 1 else { return [transform(self[...])] }
        let done = Mutex<[Int: T]>([:])
        DispatchQueue.concurrentPerform(iterations: slices) { slice in
            let result = transform(self[count * slice / slices..<count * (slice + 1) / slices])
            done.withLock { $0[slice] = result }
        }
        return done.withLock { done in (0..<slices).map { done[$0]! } }
    }
}
