// The attempt lifecycle of attempt_lifecycle.h: pure transitions, no system calls (the supervisor carries out the
// actions, in a forked process where only async-signal-safe code may run).
#include "attempt_lifecycle.h"
#include "supervisor.h"

static int64_t earlier(int64_t a, int64_t b) {
    if (a < 0) return b;
    if (b < 0) return a;
    return a < b ? a : b;
}

orch_attempt_lifecycle orch_attempt_start(int64_t now_ms, int64_t timeout_ms, int64_t grace_ms, int32_t output_open) {
    orch_attempt_lifecycle attempt = {
        .phase = ORCH_ATTEMPT_RUNNING, .report_kind = ORCH_EXITED, .deadline_ms = timeout_ms > 0 ? now_ms + timeout_ms : -1,
        .grace_ms = grace_ms < 0 ? 0 : grace_ms, .leader_done = 0, .leader_status = 0, .output_open = output_open, .output_rest_until_ms = 0,
    };
    return attempt;
}

/// The group is gone or killed: read what is left of the output, unless it is all read already.
static orch_attempt_action drain(orch_attempt_lifecycle *attempt, int64_t now_ms) {
    if (!attempt->output_open) {
        attempt->phase = ORCH_ATTEMPT_DONE;
        return ORCH_ACTION_FINISH;
    }
    attempt->phase = ORCH_ATTEMPT_DRAINING;
    attempt->deadline_ms = now_ms + ORCH_DRAIN_MS;
    return ORCH_ACTION_NONE;
}

static orch_attempt_action stop(orch_attempt_lifecycle *attempt, int32_t report_kind, int64_t now_ms) {
    attempt->phase = ORCH_ATTEMPT_STOPPING;
    attempt->report_kind = report_kind;
    attempt->deadline_ms = now_ms + attempt->grace_ms;
    return ORCH_ACTION_TERMINATE_GROUP;
}

orch_attempt_action orch_attempt_tick(orch_attempt_lifecycle *attempt, int64_t now_ms) {
    if (attempt->deadline_ms < 0 || now_ms < attempt->deadline_ms) return ORCH_ACTION_NONE;
    switch (attempt->phase) {
    case ORCH_ATTEMPT_RUNNING:
        return stop(attempt, ORCH_TIMED_OUT, now_ms);
    case ORCH_ATTEMPT_STOPPING:
        attempt->phase = ORCH_ATTEMPT_KILLED;
        attempt->deadline_ms = -1;
        return ORCH_ACTION_KILL_GROUP;
    case ORCH_ATTEMPT_ENDING_GROUP: {
        drain(attempt, now_ms);
        return ORCH_ACTION_KILL_GROUP;
    }
    case ORCH_ATTEMPT_DRAINING:
        attempt->phase = ORCH_ATTEMPT_DONE;
        return ORCH_ACTION_FINISH;
    case ORCH_ATTEMPT_KILLED:
    case ORCH_ATTEMPT_DONE:
        return ORCH_ACTION_NONE;
    }
    return ORCH_ACTION_NONE;
}

orch_attempt_action orch_attempt_terminate(orch_attempt_lifecycle *attempt, int64_t now_ms) {
    if (attempt->phase != ORCH_ATTEMPT_RUNNING) return ORCH_ACTION_NONE;
    return stop(attempt, ORCH_TERMINATED, now_ms);
}

orch_attempt_action orch_attempt_leader_exited(orch_attempt_lifecycle *attempt, int32_t status, int32_t group_alive, int64_t now_ms) {
    if (attempt->leader_done) return ORCH_ACTION_NONE;
    attempt->leader_done = 1;
    attempt->leader_status = status;
    switch (attempt->phase) {
    case ORCH_ATTEMPT_RUNNING:
    case ORCH_ATTEMPT_STOPPING:
        if (group_alive) {
            // Whatever the leader left behind in its group ends with it, within a second at most.
            int64_t grace = attempt->grace_ms < ORCH_ENDING_GROUP_MS ? attempt->grace_ms : ORCH_ENDING_GROUP_MS;
            attempt->deadline_ms = attempt->phase == ORCH_ATTEMPT_STOPPING ? earlier(attempt->deadline_ms, now_ms + grace) : now_ms + grace;
            attempt->phase = ORCH_ATTEMPT_ENDING_GROUP;
            return ORCH_ACTION_TERMINATE_GROUP;
        }
        return drain(attempt, now_ms) == ORCH_ACTION_FINISH ? ORCH_ACTION_FINISH : ORCH_ACTION_NONE;
    case ORCH_ATTEMPT_KILLED:
        return drain(attempt, now_ms);
    case ORCH_ATTEMPT_ENDING_GROUP:
    case ORCH_ATTEMPT_DRAINING:
    case ORCH_ATTEMPT_DONE:
        return ORCH_ACTION_NONE;
    }
    return ORCH_ACTION_NONE;
}

orch_attempt_action orch_attempt_output_closed(orch_attempt_lifecycle *attempt) {
    attempt->output_open = 0;
    // Output that ends while the leader runs changes nothing; after it, the attempt is over (what is left of its
    // group is killed on the way out).
    if (!attempt->leader_done || attempt->phase == ORCH_ATTEMPT_DONE) return ORCH_ACTION_NONE;
    attempt->phase = ORCH_ATTEMPT_DONE;
    return ORCH_ACTION_FINISH;
}

void orch_attempt_output_read(orch_attempt_lifecycle *attempt, int64_t bytes, int64_t now_ms) {
    attempt->output_rest_until_ms = bytes < ORCH_OUTPUT_TRICKLE_BYTES ? now_ms + ORCH_OUTPUT_REST_MS : 0;
}

int32_t orch_attempt_reads_output(const orch_attempt_lifecycle *attempt, int64_t now_ms) {
    return attempt->leader_done || now_ms >= attempt->output_rest_until_ms;
}

int64_t orch_attempt_wait_ms(const orch_attempt_lifecycle *attempt, int64_t now_ms, int64_t cap_ms) {
    if (!orch_attempt_reads_output(attempt, now_ms)) {
        int64_t rest = attempt->output_rest_until_ms - now_ms;
        if (rest < cap_ms) cap_ms = rest;
    }
    if (attempt->deadline_ms < 0) return cap_ms;
    int64_t left = attempt->deadline_ms - now_ms;
    if (left < 0) return 0;
    return left < cap_ms ? left : cap_ms;
}
