import CSupervisor
import Testing

/// The supervisor's per-attempt state machine (attempt_lifecycle.h), driven with made-up times: what it does to the
/// command's process group, and what the report says.
@Suite("Attempt lifecycle in the supervisor")
struct AttemptLifecycleTests {
    static let exited0: Int32 = 0  // waitpid status of exit(0)
    static let exited3: Int32 = 3 << 8  // exit(3)
    static let killed: Int32 = 9  // terminated by SIGKILL

    @Test("a command that exits with an empty group ends when its output closes")
    func exits() {
        var attempt = orch_attempt_start(0, 5_000, 5_000, 1)
        #expect(orch_attempt_tick(&attempt, 1_000) == ORCH_ACTION_NONE)
        #expect(orch_attempt_leader_exited(&attempt, Self.exited3, 0, 1_200) == ORCH_ACTION_NONE)
        #expect(attempt.phase == ORCH_ATTEMPT_DRAINING && attempt.deadline_ms == 1_200 + Int64(ORCH_DRAIN_MS))
        #expect(orch_attempt_output_closed(&attempt) == ORCH_ACTION_FINISH)
        #expect(
            attempt.phase == ORCH_ATTEMPT_DONE && attempt.report_kind == Int32(ORCH_EXITED)
                && attempt.leader_status == Self.exited3)
    }

    @Test("a timeout sends SIGTERM, SIGKILL after the grace, and the report says timed out")
    func timeout() {
        var attempt = orch_attempt_start(0, 1_000, 500, 1)
        #expect(orch_attempt_wait_ms(&attempt, 400, 250) == 250 && orch_attempt_wait_ms(&attempt, 900, 250) == 100)
        #expect(orch_attempt_tick(&attempt, 999) == ORCH_ACTION_NONE)
        #expect(orch_attempt_tick(&attempt, 1_000) == ORCH_ACTION_TERMINATE_GROUP)
        #expect(attempt.phase == ORCH_ATTEMPT_STOPPING && attempt.deadline_ms == 1_500)
        #expect(orch_attempt_terminate(&attempt, 1_100) == ORCH_ACTION_NONE, "already stopping: the reason stays")
        #expect(orch_attempt_tick(&attempt, 1_500) == ORCH_ACTION_KILL_GROUP)
        #expect(attempt.phase == ORCH_ATTEMPT_KILLED && orch_attempt_wait_ms(&attempt, 1_500, 250) == 250)
        #expect(orch_attempt_leader_exited(&attempt, Self.killed, 0, 1_510) == ORCH_ACTION_NONE)
        #expect(attempt.phase == ORCH_ATTEMPT_DRAINING)
        #expect(orch_attempt_tick(&attempt, 1_510 + Int64(ORCH_DRAIN_MS)) == ORCH_ACTION_FINISH)
        #expect(attempt.report_kind == Int32(ORCH_TIMED_OUT))
    }

    @Test("a leader that ends on SIGTERM within the grace needs no SIGKILL; no timeout never times out")
    func terminate() {
        var attempt = orch_attempt_start(0, 0, 5_000, 0)
        #expect(attempt.deadline_ms == -1 && orch_attempt_tick(&attempt, 1_000_000) == ORCH_ACTION_NONE)
        #expect(orch_attempt_terminate(&attempt, 1_000_000) == ORCH_ACTION_TERMINATE_GROUP)
        #expect(
            orch_attempt_leader_exited(&attempt, 15, 0, 1_000_100) == ORCH_ACTION_FINISH,
            "nothing captured: done at once")
        #expect(attempt.report_kind == Int32(ORCH_TERMINATED) && attempt.phase == ORCH_ATTEMPT_DONE)
    }

    @Test("what the leader leaves in its group gets SIGTERM, then SIGKILL within a second (or the grace when shorter)")
    func leftovers() {
        var attempt = orch_attempt_start(0, 60_000, 5_000, 1)
        #expect(orch_attempt_leader_exited(&attempt, Self.exited0, 1, 2_000) == ORCH_ACTION_TERMINATE_GROUP)
        #expect(
            attempt.phase == ORCH_ATTEMPT_ENDING_GROUP && attempt.deadline_ms == 2_000 + Int64(ORCH_ENDING_GROUP_MS))
        #expect(orch_attempt_tick(&attempt, 2_999) == ORCH_ACTION_NONE)
        #expect(orch_attempt_tick(&attempt, 3_000) == ORCH_ACTION_KILL_GROUP)
        #expect(attempt.phase == ORCH_ATTEMPT_DRAINING)
        #expect(orch_attempt_output_closed(&attempt) == ORCH_ACTION_FINISH)
        #expect(attempt.report_kind == Int32(ORCH_EXITED) && attempt.leader_status == Self.exited0)

        var short = orch_attempt_start(0, 60_000, 300, 1)
        _ = orch_attempt_leader_exited(&short, Self.exited0, 1, 100)
        #expect(short.deadline_ms == 400, "a grace shorter than a second")
        #expect(
            orch_attempt_output_closed(&short) == ORCH_ACTION_FINISH,
            "output closed: over, what is left is killed on the way out")
    }

    @Test("a stopping leader that leaves its group behind keeps the earlier deadline")
    func stoppingWithLeftovers() {
        var attempt = orch_attempt_start(0, 1_000, 5_000, 1)
        _ = orch_attempt_tick(&attempt, 1_000)
        #expect(orch_attempt_leader_exited(&attempt, 15, 1, 1_100) == ORCH_ACTION_TERMINATE_GROUP)
        #expect(attempt.phase == ORCH_ATTEMPT_ENDING_GROUP && attempt.deadline_ms == 2_100)
        #expect(attempt.report_kind == Int32(ORCH_TIMED_OUT))
        #expect(orch_attempt_leader_exited(&attempt, 0, 0, 1_200) == ORCH_ACTION_NONE, "reaped once")
    }

    @Test("output that closes while the leader runs changes nothing")
    func outputFirst() {
        var attempt = orch_attempt_start(0, 10_000, 5_000, 1)
        #expect(orch_attempt_output_closed(&attempt) == ORCH_ACTION_NONE && attempt.phase == ORCH_ATTEMPT_RUNNING)
        #expect(orch_attempt_leader_exited(&attempt, Self.exited0, 0, 500) == ORCH_ACTION_FINISH)
    }

    @Test(
        "a running command's trickle of output gathers for a moment after each read, never more, never after it exits")
    func outputRests() {
        let rest = Int64(ORCH_OUTPUT_REST_MS)
        var attempt = orch_attempt_start(0, 60_000, 5_000, 1)
        #expect(orch_attempt_reads_output(&attempt, 0) == 1)
        orch_attempt_output_read(&attempt, 80, 1_000)
        #expect(
            orch_attempt_reads_output(&attempt, 1_000) == 0 && orch_attempt_reads_output(&attempt, 1_000 + rest) == 1)
        #expect(orch_attempt_wait_ms(&attempt, 1_002, 250) == rest - 2, "the poll wakes when the rest is over")
        // A page or more at once (a pipe may hold no more than that): a writer as fast as that is never kept waiting.
        orch_attempt_output_read(&attempt, Int64(ORCH_OUTPUT_TRICKLE_BYTES), 1_100)
        #expect(orch_attempt_reads_output(&attempt, 1_100) == 1)
        orch_attempt_output_read(&attempt, 80, 1_200)
        #expect(orch_attempt_leader_exited(&attempt, Self.exited0, 0, 1_201) == ORCH_ACTION_NONE)
        #expect(orch_attempt_reads_output(&attempt, 1_201) == 1, "what is left is drained at once")
        #expect(orch_attempt_wait_ms(&attempt, 1_201, 250) == Int64(ORCH_DRAIN_MS))
    }
}
