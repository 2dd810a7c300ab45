/// How many tests of a batched suite share a process (`suite.batch: auto`), from what its runner costs: each process
/// pays the runner's start-up (importing, discovering every test of the binary) once, so batches are sized for that
/// start-up to be a small share of each, while keeping enough batches for the slots to finish together. The suite's
/// `size` and `seconds` stay upper bounds.
package struct BatchSizing: Sendable, Equatable {
    /// At most this share of a batch's process goes to its runner's start-up, when the tests are long enough to allow
    /// it with one process per slot.
    package static let startupShare = 0.1
    /// Batches per slot when start-up is cheap or unknown: the slots finish together (the queue's tail is shared out
    /// too, down to single tests).
    package static let batchesPerSlot = 3

    /// Worker slots of the run on this host.
    package var slots: Int
    /// Processors of the host: processes beyond these do not run at once, so fewer batches than slots may do.
    package var cores: Int

    package init(slots: Int, cores: Int) {
        self.slots = max(slots, 1)
        self.cores = max(cores, 1)
    }

    /// What was chosen for a suite's batches, and why (said with `--verbose`).
    package struct Choice: Sendable, Equatable {
        package var batch: Batch
        /// Processes the suite is expected to take.
        package var processes: Int
        package var reason: String
    }

    /// The batch for tests with these expected milliseconds (`nil`: never seen) and a runner whose start-up per
    /// process is `startup` milliseconds (`nil`: never measured), within `bounds`. `share`: the part of the run's
    /// batched tests these are (a suite with XCTest and Swift Testing tests has two batch commands, sharing the slots).
    package func choose(_ bounds: Batch, tests: [Int64?], startup: Int64?, share: Double = 1) -> Choice {
        let count = tests.count
        guard count > 0 else { return Choice(batch: bounds, processes: 0, reason: "no tests") }
        let part = min(max(share, 0), 1)
        let balance = max(Int((Double(slots * Self.batchesPerSlot) * part).rounded()), 1)
        let known = tests.compactMap { $0 }
        var processes = balance
        var total: Int64?
        let portion = part < 1 ? " (\(Int((part * 100).rounded()))% of the batched tests)" : ""
        var reason = "\(Self.batchesPerSlot) batches per slot\(portion): "
        if let startup, startup > 0, !known.isEmpty {
            // Tests never seen are taken to last as long as the median of those seen.
            let median = known.sorted()[known.count / 2]
            let sum = known.reduce(0, +) + Int64(count - known.count) * median
            total = sum
            // Each batch's tests take at least (1 - share) / share times the start-up.
            let perBatch = Double(startup) * (1 - Self.startupShare) / Self.startupShare
            let fewest = max(Int((Double(min(slots, cores)) * part).rounded()), 1)
            let affordable = Int(Double(sum) / perBatch)
            if affordable < balance {
                processes = max(affordable, fewest)
                reason =
                    affordable >= fewest
                    ? "start-up \(startup) ms at most \(Int(Self.startupShare * 100))% of each batch: "
                    : "start-up \(startup) ms against \(sum) ms of tests: one batch per processor (\(fewest)): "
            } else {
                reason += "start-up \(startup) ms is under \(Int(Self.startupShare * 100))% of each: "
            }
        } else {
            reason += startup == nil ? "no start-up measured yet: " : "no test times yet: "
        }
        processes = max(min(processes, count), 1)
        var batch = bounds
        // Fewer processes than slots: the end of the queue is shared among those, not cut up for every slot.
        batch.processes = processes < slots ? processes : nil
        // A little room over an even share: tests are packed longest first, and never cut in two.
        let even = (count + processes - 1) / processes
        batch.size = max(min(bounds.size, count, total == nil ? even : even + (even + 1) / 2), 1)
        if let total {
            let share = (total + Int64(processes) - 1) / Int64(processes)
            batch.milliseconds = max(min(bounds.milliseconds, share + share / 4), 1)
        }
        let made = max((count + batch.size - 1) / batch.size, processes)
        reason += "about \(made) processes for \(count) tests, up to \(batch.size) per batch"
        if total != nil { reason += " and \(batch.milliseconds) ms of expected time" }
        return Choice(batch: batch, processes: made, reason: reason)
    }
}
