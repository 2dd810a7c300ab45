/// How many tests of a batched suite share a process (`suite.batch: auto`), from what its runner costs: each process
/// pays the runner's start-up (importing, discovering every test of the binary) once, so batches are sized for that
/// start-up to be a small share of each, while keeping enough batches for the slots to finish together. The suite's
/// `size` and `seconds` stay upper bounds.
package struct BatchSizing: Sendable, Equatable {
    /// At most this share of a batch's process goes to its runner's start-up, when the tests are long enough to allow
    /// it with one process per slot.
    package static let startupShare = 0.1
    /// What a test is taken to cost, in milliseconds, in a suite without history: its runner's listing time says what
    /// each process will pay to start, and tests of 20 ms make a process dearer to start than to run for a suite of
    /// a few hundred, which is where batches of ten lose (the next run knows better).
    package static let assumedPerTest = 20.0
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

    /// The batch for tests with these expected milliseconds (`nil`: never seen) and a runner that costs `cost` per
    /// process (`nil`: never measured), within `bounds`. `share`: the part of the run's batched tests these are (a
    /// suite with XCTest and Swift Testing tests has two batch commands, sharing the slots).
    package func choose(_ bounds: Batch, tests: [Int64?], cost: RunnerCost?, share: Double = 1) -> Choice {
        let count = tests.count
        guard count > 0 else { return Choice(batch: bounds, processes: 0, reason: "no tests") }
        let part = min(max(share, 0), 1)
        let balance = max(Int((Double(slots * Self.batchesPerSlot) * part).rounded()), 1)
        let known = tests.compactMap { $0 }
        // Tests never seen are taken to last as long as the median of those seen.
        let total =
            known.isEmpty ? nil : known.reduce(0, +) + Int64(count - known.count) * known.sorted()[known.count / 2]
        // What the tests cost inside their processes: less than their times add up to where they run in parallel there.
        let work = cost?.perTest.map { $0 * Double(count) } ?? total.map(Double.init)
        var processes = balance
        let portion = part < 1 ? " (\(Int((part * 100).rounded()))% of the batched tests)" : ""
        let origin =
            cost?.assumed == true
            ? "no history: the listing's time as start-up, \(Int(Self.assumedPerTest)) ms per test; " : ""
        var reason = origin + "\(Self.batchesPerSlot) batches per slot\(portion): "
        if let startup = cost?.startup, startup > 0, let work {
            // Each batch's tests take at least (1 - share) / share times the start-up.
            let perBatch = Double(startup) * (1 - Self.startupShare) / Self.startupShare
            // The processors want one process each, unless the runner keeps several busy itself.
            let inside = max(cost?.concurrency ?? 1, 1)
            let fewest = max(Int((Double(min(slots, cores)) * part / inside).rounded()), 1)
            let affordable = Int(work / perBatch)
            let percent = Int(Self.startupShare * 100)
            let atOnce = "the runner runs \((inside * 10).rounded() / 10) tests at once itself, \(fewest) batch(es)"
            if cost?.assumed == true, inside >= 1.5 {
                // Without history a test's cost is a guess, and a runner that keeps the processors busy itself loses
                // nothing by running them all in one process per processor's worth; more pay its start-up again.
                processes = fewest
                reason = "no history: \(atOnce) until history says what its tests cost: "
            } else if affordable < balance {
                processes = max(affordable, fewest)
                reason =
                    origin
                    + (affordable >= fewest
                        ? "start-up \(startup) ms at most \(percent)% of each batch (\(Int(work)) ms of tests): "
                        : "start-up \(startup) ms against \(Int(work)) ms of tests: "
                            + (inside >= 1.5 ? "\(atOnce): " : "one batch per processor (\(fewest)): "))
            } else {
                reason += "start-up \(startup) ms is under \(percent)% of each (\(Int(work)) ms of tests): "
            }
        } else {
            reason += cost == nil ? "no start-up measured yet: " : "no test times yet: "
        }
        processes = max(min(processes, count), 1)
        var batch = bounds
        let even = (count + processes - 1) / processes
        if processes < max(Int((Double(slots) * part).rounded()), 1) {
            // Fewer processes than slots, each start-up dearer than what its tests take: an even share of the tests
            // each, by count (where tests run in parallel inside a process their own times say little), and the end
            // of the queue is not cut up for the idle slots (each more process pays the start-up again).
            batch.processes = processes
            batch.size = max(min(bounds.size, even), 1)
        } else {
            // A little room over an even share: tests are packed longest first, and never cut in two.
            batch.size = max(min(bounds.size, count, total == nil ? even : even + (even + 1) / 2), 1)
            if let total {
                let share = (total + Int64(processes) - 1) / Int64(processes)
                batch.milliseconds = max(min(bounds.milliseconds, share + share / 4), 1)
            }
        }
        let made = max((count + batch.size - 1) / batch.size, processes)
        reason += "about \(made) processes for \(count) tests, up to \(batch.size) per batch"
        if batch.milliseconds != bounds.milliseconds { reason += " and \(batch.milliseconds) ms of expected time" }
        return Choice(batch: batch, processes: made, reason: reason)
    }
}

extension BatchSizing {
    /// The slots worth starting for `scenarios` out of `workers`: where every one of them is in a batch sized for
    /// fewer processes than slots (``Batch/processes``: its runner's start-up outweighs its tests), the sum of those
    /// processes — a slot more would only claim a test to run alone, paying the start-up again; otherwise all of them.
    package static func slotsWorthStarting(for scenarios: [Scenario], workers: Int) -> Int {
        var processes: [String: Int] = [:]
        for scenario in scenarios {
            guard let batch = scenario.batch, let wanted = batch.processes else { return workers }
            processes[batch.command] = wanted
        }
        guard !processes.isEmpty else { return workers }
        return min(max(processes.values.reduce(0, +), 1), workers)
    }
}

/// What a batch command's runner costs per process, from the last processes that ran it.
package struct RunnerCost: Sendable, Equatable {
    /// Milliseconds a process spends outside its tests (its runner's start-up and end).
    package var startup: Int64
    /// Milliseconds a test takes of its process: the processes' time less their start-up, shared by their tests (`nil`:
    /// not known).
    package var perTest: Double?
    /// How many tests a process ran at once, on average: their own times over the process's time less start-up (about
    /// 1 where the runner runs them one after another; about the processors where it runs them in parallel, as Swift
    /// Testing does). `nil`: not known.
    package var concurrency: Double?

    /// Taken from the time the runner took to list the tests, with ``BatchSizing/assumedPerTest``: a suite without
    /// history.
    package var assumed = false

    package init(startup: Int64, perTest: Double? = nil, concurrency: Double? = nil) {
        self.startup = startup
        self.perTest = perTest
        self.concurrency = concurrency
    }

    /// A suite without history: its runner took `listing` milliseconds to list the tests (it imported or discovered
    /// them all, as each batch's process will), and each test is taken to cost ``BatchSizing/assumedPerTest``.
    /// `concurrency`: the tests a process runs at once, where the runner runs them in parallel itself.
    package static func listing(_ milliseconds: Int64, concurrency: Double? = nil) -> RunnerCost {
        var cost = RunnerCost(startup: milliseconds, perTest: BatchSizing.assumedPerTest, concurrency: concurrency)
        cost.assumed = true
        return cost
    }
}
