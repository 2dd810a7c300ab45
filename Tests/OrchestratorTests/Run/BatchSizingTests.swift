import OrchestrateModel
import Testing

/// `suite.batch: auto`: batches sized from the runner's start-up and the tests' times, within the suite's bounds.
@Suite("Batch sizing")
struct BatchSizingTests {
    static let bounds = Batch(command: "run {ids}", size: 10_000, milliseconds: 600_000)

    @Test("without history: three batches per slot, so that start-up is paid a few times per slot, not per ten tests")
    func noHistory() {
        let choice = BatchSizing(slots: 8, cores: 2).choose(
            Self.bounds, tests: Array(repeating: nil, count: 880), cost: nil)
        #expect(choice.processes == 24)
        #expect(choice.batch.size == 37)
        #expect(choice.batch.milliseconds == 600_000)
        #expect(choice.reason.contains("no start-up measured yet"))
        #expect(choice.batch.processes == nil)
    }

    @Test("without history but with the listing's time: a slow listing means few processes, a quick one many")
    func listing() {
        let sizing = BatchSizing(slots: 8, cores: 2)
        // pytest importing 1,386 tests for 6 s, tests taken at 20 ms: one process per processor.
        let slow = sizing.choose(Self.bounds, tests: Array(repeating: nil, count: 1_386), cost: .listing(6_000))
        #expect(slow.processes == 2)
        #expect(slow.reason.hasPrefix("no history: the listing's time as start-up, 20 ms per test; "))
        // An XCTest binary listing 560 tests in 30 ms: three batches per slot.
        let quick = sizing.choose(Self.bounds, tests: Array(repeating: nil, count: 560), cost: .listing(30))
        #expect(quick.processes == 24)
    }

    @Test("without history, a runner that runs its tests in parallel itself (Swift Testing): one process per its width")
    func parallelRunnerWithoutHistory() {
        // 881 tests listed in 150 ms by a runner that keeps both processors busy: one process, not one per 20 ms guess.
        let two = BatchSizing(slots: 8, cores: 2).choose(
            Self.bounds, tests: Array(repeating: nil, count: 881), cost: .listing(150, concurrency: 2))
        #expect(two.processes == 1)
        #expect(two.batch.processes == 1)
        #expect(two.batch.size == 881)
        #expect(two.reason.hasPrefix("no history: the runner runs 2.0 tests at once itself, 1 batch(es)"))
        // The same runner told to run one test at a time (concurrency 1): batches by the 20 ms guess, as for XCTest.
        let serial = BatchSizing(slots: 8, cores: 2).choose(
            Self.bounds, tests: Array(repeating: nil, count: 881), cost: .listing(150, concurrency: 1))
        #expect(serial.processes > 1)
    }

    @Test("a start-up that dwarfs quick tests: one batch per processor, not per slot")
    func costlyStartup() {
        // Swift Testing discovering every test of the binary in each process: 500 ms, against 880 tests of 2 ms.
        let choice = BatchSizing(slots: 8, cores: 2).choose(
            Self.bounds, tests: Array(repeating: 2, count: 880), cost: RunnerCost(startup: 500))
        #expect(choice.processes == 2)
        // An even share each, by count; the end of the queue is not cut up for the 6 idle slots.
        #expect(choice.batch.size == 440)
        #expect(choice.batch.milliseconds == Self.bounds.milliseconds)
        #expect(choice.reason.contains("one batch per processor"))
        #expect(choice.batch.processes == 2)
    }

    @Test("start-up at most a tenth of each batch where the tests allow it, and no more batches than that")
    func startupShare() {
        // pytest importing for 1 s; 770 tests, 60 s together: 6 batches of at least 9 s of tests each.
        let tests: [Int64?] = Array(repeating: 60_000 / 770, count: 770)
        let choice = BatchSizing(slots: 8, cores: 2).choose(Self.bounds, tests: tests, cost: RunnerCost(startup: 1_000))
        #expect(choice.processes == 6)
        let total = tests.compactMap { $0 }.reduce(0, +)
        #expect(total / Int64(choice.processes) >= 9_000)
        #expect(choice.reason.contains("at most 10% of each batch"))
    }

    @Test("tests that run in parallel inside their process cost what the process took, not what their times add up to")
    func parallelInside() {
        // Swift Testing: 880 tests of 80 ms each by their own times, run in parallel inside processes whose time less
        // start-up came to 1 ms per test.
        let sizing = BatchSizing(slots: 8, cores: 2)
        let tests: [Int64?] = Array(repeating: 80, count: 880)
        let parallel = sizing.choose(Self.bounds, tests: tests, cost: RunnerCost(startup: 200, perTest: 1))
        #expect(parallel.processes == 2)
        #expect(parallel.batch.size == 440)
        let serial = sizing.choose(Self.bounds, tests: tests, cost: RunnerCost(startup: 200))
        #expect(serial.processes == 24)
        // A runner that keeps both processors busy itself needs one process, not one per processor.
        let busy = sizing.choose(Self.bounds, tests: tests, cost: RunnerCost(startup: 200, perTest: 1, concurrency: 2))
        #expect(busy.processes == 1)
        #expect(busy.batch.size == 880)
        #expect(busy.reason.contains("runs 2.0 tests at once itself"))
    }

    @Test("a cheap start-up against long tests: three batches per slot, bounded in time so that none runs long")
    func cheapStartup() {
        let choice = BatchSizing(slots: 8, cores: 8).choose(
            Self.bounds, tests: Array(repeating: 1_000, count: 100), cost: RunnerCost(startup: 50))
        #expect(choice.processes == 24)
        // An even share of the 100 s is 4.2 s, with a quarter of room for packing.
        #expect(choice.batch.milliseconds == 5_208)
        #expect(choice.batch.size == 8)
    }

    @Test("tests never seen count as the median of those seen; the suite's size and seconds stay upper bounds")
    func boundsAndUnknowns() {
        let bounded = Batch(command: "run {ids}", size: 10, milliseconds: 5_000)
        let choice = BatchSizing(slots: 2, cores: 2).choose(
            bounded, tests: [100, 300, nil, nil] + Array(repeating: 200, count: 96), cost: RunnerCost(startup: 10))
        #expect(choice.batch.size <= 10)
        #expect(choice.batch.milliseconds <= 5_000)
        // 100 tests of 200 ms (the unknown two as the median), sized for 6 batches; the bound of 10 tests makes 10.
        #expect(choice.processes == 10)
    }

    @Test("two batch commands (XCTest and Swift Testing in one package) share the slots by their tests")
    func sharedSlots() {
        let sizing = BatchSizing(slots: 2, cores: 2)
        let half = sizing.choose(Self.bounds, tests: Array(repeating: nil, count: 5), cost: nil, share: 0.5)
        #expect(half.processes == 3)
        #expect(half.batch.size == 2)
        #expect(half.reason.contains("50% of the batched tests"))
        // Costly start-up: at least one process each.
        let costly = sizing.choose(
            Self.bounds, tests: Array(repeating: 1, count: 5), cost: RunnerCost(startup: 1_000), share: 0.2)
        #expect(costly.processes == 1)
        #expect(costly.batch.size == 5)
    }

    @Test("slots worth starting: the batches' processes when every test is in such a batch, else every slot")
    func slotsWorthStarting() {
        func scenario(_ id: String, _ batch: Batch?) -> Scenario {
            Scenario(id: id, name: id, command: "x", timeoutMilliseconds: 1_000, batch: batch)
        }
        var swiftTesting = Batch(command: "st {ids}", size: 500, milliseconds: 60_000)
        swiftTesting.processes = 2
        var xctest = Batch(command: "xc {ids}", size: 500, milliseconds: 60_000)
        xctest.processes = 1
        let both = [scenario("a", swiftTesting), scenario("b", swiftTesting), scenario("c", xctest)]
        #expect(BatchSizing.slotsWorthStarting(for: both, workers: 8) == 3)
        #expect(BatchSizing.slotsWorthStarting(for: both, workers: 2) == 2)
        // A test outside such a batch may need any slot.
        #expect(BatchSizing.slotsWorthStarting(for: both + [scenario("d", nil)], workers: 8) == 8)
        xctest.processes = nil
        #expect(BatchSizing.slotsWorthStarting(for: both.dropLast() + [scenario("c", xctest)], workers: 8) == 8)
        #expect(BatchSizing.slotsWorthStarting(for: [], workers: 8) == 8)
    }

    @Test("never more processes than tests, never a batch of nothing")
    func fewTests() {
        let sizing = BatchSizing(slots: 8, cores: 2)
        #expect(sizing.choose(Self.bounds, tests: [nil, nil, nil], cost: nil).batch.size == 1)
        #expect(sizing.choose(Self.bounds, tests: [nil, nil, nil], cost: nil).processes == 3)
        #expect(sizing.choose(Self.bounds, tests: [5], cost: RunnerCost(startup: 10_000)).batch.size == 1)
        #expect(sizing.choose(Self.bounds, tests: [], cost: nil).processes == 0)
    }
}
