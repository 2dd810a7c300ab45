import Coordinator
import OrchestrateModel
import Synchronization

/// What a coordinator or agent has done, as Prometheus metrics (the text exposition format, version 0.0.4), for
/// `--metrics-port`: its slots busy and idle, attempts by outcome, the run's queue depth, lease expiries, requeues
/// and lost leases, and how long a claim takes. Counters count from the process's start, over every run it works.
package final class RunMetrics: Sendable {
    private struct State {
        var slots = 0
        var busy: Set<Int> = []
        var outcomes: [Outcome: Int] = [:]
        var discarded = 0
        var queued = 0
        var running = 0
        var expiries = 0
        var requeues = 0
        var leasesLost = 0
        var claims = 0
        /// Claim latency: counts per bucket of ``RunMetrics/buckets`` (not cumulative), the sum and the count.
        var latencyBuckets: [Int]
        var latencySum = 0.0
        var latencyCount = 0
    }

    /// The claim latency histogram's upper bounds, in seconds.
    static let buckets: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10]

    private let state = Mutex(State(latencyBuckets: Array(repeating: 0, count: RunMetrics.buckets.count)))

    package init() {}

    /// A run starts on `workers` slots here.
    package func started(workers: Int) {
        state.withLock {
            $0.slots = workers
            $0.busy = []
        }
    }

    /// What is left of the run, as last counted.
    package func queue(_ counts: QueueCounts) {
        state.withLock {
            $0.queued = counts.queued
            $0.running = counts.running
        }
    }

    package func handle(_ event: CoordinatorEvent) {
        state.withLock { state in
            switch event {
            case .attemptStarted(let slot, _):
                state.busy.insert(slot)
            case .attemptFinished(let slot, _, let result, _):
                state.busy.remove(slot)
                state.outcomes[result.outcome, default: 0] += 1
            case .attemptReleased(let slot, _):
                state.busy.remove(slot)
                state.requeues += 1
            case .attemptLost(let slot, _, let requeued):
                state.busy.remove(slot)
                if requeued { state.requeues += 1 }
            case .leasesReclaimed(let count):
                state.expiries += count
            case .leaseLost:
                state.leasesLost += 1
            case .slotRetired:
                state.slots -= 1
            case .queueRound(let claimants, let claimed, _, let duration, let counts):
                if let counts {
                    state.queued = counts.queued
                    state.running = counts.running
                }
                guard claimants > 0 else { return }
                state.claims += claimed
                let seconds = Double(duration.components.attoseconds) / 1e18 + Double(duration.components.seconds)
                if let bucket = Self.buckets.firstIndex(where: { seconds <= $0 }) { state.latencyBuckets[bucket] += 1 }
                state.latencySum += seconds
                state.latencyCount += 1
            case .slotReady:
                break
            }
        }
    }

    /// The exposition, with HELP and TYPE for every family.
    package func render() -> String {
        let state = state.withLock { $0 }
        var text = ""
        func family(_ name: String, _ type: String, _ help: String, _ samples: [(labels: String, value: String)]) {
            text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
            for sample in samples { text += "\(name)\(sample.labels) \(sample.value)\n" }
        }
        family(
            "orchestrate_slots", "gauge", "Worker slots of this process, by state.",
            [
                ("{state=\"busy\"}", "\(state.busy.count)"),
                ("{state=\"idle\"}", "\(max(state.slots - state.busy.count, 0))"),
            ])
        family(
            "orchestrate_attempts_total", "counter", "Attempts this process finished, by outcome.",
            Outcome.allCases.map { ("{outcome=\"\($0.rawValue)\"}", "\(state.outcomes[$0, default: 0])") })
        family(
            "orchestrate_queue_attempts", "gauge",
            "Attempts of the current run, queued and running on any host, as last counted.",
            [("{state=\"queued\"}", "\(state.queued)"), ("{state=\"running\"}", "\(state.running)")])
        family(
            "orchestrate_lease_expiries_total", "counter",
            "Expired leases this process's reaper took back (their attempts requeued).",
            [("", "\(state.expiries)")])
        family(
            "orchestrate_requeues_total", "counter",
            "Attempts this process gave back to the queue unfinished (a stop, a lost supervisor).",
            [("", "\(state.requeues)")])
        family(
            "orchestrate_leases_lost_total", "counter",
            "Attempts ended here because their lease was taken back while this host was cut off.",
            [("", "\(state.leasesLost)")])
        family("orchestrate_claims_total", "counter", "Attempts this process claimed.", [("", "\(state.claims)")])
        var cumulative = 0
        var latency: [(String, String)] = []
        for (bound, count) in zip(Self.buckets, state.latencyBuckets) {
            cumulative += count
            latency.append(("_bucket{le=\"\(bound)\"}", "\(cumulative)"))
        }
        latency += [
            ("_bucket{le=\"+Inf\"}", "\(state.latencyCount)"), ("_sum", "\(state.latencySum)"),
            ("_count", "\(state.latencyCount)"),
        ]
        text += "# HELP orchestrate_claim_latency_seconds Round trips to the queue that claimed for waiting slots.\n"
        text += "# TYPE orchestrate_claim_latency_seconds histogram\n"
        for (suffix, value) in latency { text += "orchestrate_claim_latency_seconds\(suffix) \(value)\n" }
        return text
    }
}
