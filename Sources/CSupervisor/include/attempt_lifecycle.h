#ifndef ORCHESTRATE_ATTEMPT_LIFECYCLE_H
#define ORCHESTRATE_ATTEMPT_LIFECYCLE_H

#include <stdint.h>

/// One attempt's life in the supervisor, as an explicit state machine: pure (no system calls, async-signal-safe), so
/// the supervisor drives it from its poll loop and tests drive it with made-up times.
///
///     RUNNING ──timeout──────────▶ STOPPING(timed out) ──grace──▶ KILLED ──leader exits──▶ DRAINING ──▶ DONE
///        │ ──terminate────────────▶ STOPPING(terminated)  │                                   ▲
///        │                                                └──leader exits, group left──▶ ENDING_GROUP
///        └──leader exits──▶ ENDING_GROUP (its group still has members) ──grace (≤ 1 s)──▶ DRAINING
///                       └─▶ DRAINING (the group is gone): output read until it closes or the drain time is up
///
/// Every transition says what the supervisor does: nothing, SIGTERM or SIGKILL to the command's process group, or
/// finish (SIGKILL what is left, reap, report).
typedef enum {
    ORCH_ATTEMPT_RUNNING = 0,       ///< the leader runs; the deadline is the timeout (or none)
    ORCH_ATTEMPT_STOPPING = 1,      ///< SIGTERM sent to the group; the deadline is the end of the grace
    ORCH_ATTEMPT_KILLED = 2,        ///< SIGKILL sent; waiting for the leader to be reaped
    ORCH_ATTEMPT_ENDING_GROUP = 3,  ///< the leader exited, what it left in its group got SIGTERM
    ORCH_ATTEMPT_DRAINING = 4,      ///< the group is gone or killed; the rest of the output is read
    ORCH_ATTEMPT_DONE = 5,
} orch_attempt_phase;

typedef enum {
    ORCH_ACTION_NONE = 0,
    ORCH_ACTION_TERMINATE_GROUP = 1,  ///< SIGTERM to the process group
    ORCH_ACTION_KILL_GROUP = 2,       ///< SIGKILL to the process group
    ORCH_ACTION_FINISH = 3,           ///< leave the loop: kill what is left, reap, report
} orch_attempt_action;

/// Why the attempt ended: the report's kind (ORCH_EXITED for a leader that exited or was signalled on its own).
typedef struct {
    orch_attempt_phase phase;
    int32_t report_kind;   ///< ORCH_EXITED, ORCH_TIMED_OUT or ORCH_TERMINATED (supervisor.h)
    int64_t deadline_ms;   ///< when the phase's wait runs out (monotonic ms), -1 for none
    int64_t grace_ms;      ///< between SIGTERM and SIGKILL
    int32_t leader_done;
    int32_t leader_status; ///< as waitpid gave it
    int32_t output_open;   ///< the captured streams are not all at end of file yet
    int64_t output_rest_until_ms; ///< output is not read before then (monotonic ms; 0: read it whenever it comes)
} orch_attempt_lifecycle;

/// How long a group with its leader gone gets after SIGTERM (at most; less when the grace is shorter).
#define ORCH_ENDING_GROUP_MS 1000
/// How long output is read after the group is gone or killed (descendants that left the group may hold the pipes).
#define ORCH_DRAIN_MS 200
/// How long a running command's output gathers in its pipes after a read of less than ORCH_OUTPUT_TRICKLE_BYTES: a test
/// that prints a line at a time would otherwise wake the supervisor (and be switched out for it) at every line, which
/// costs a chatty test about a twentieth of its time on a busy machine. A command that writes faster (a read of a page or
/// more; a pipe holds one page at least) is read as fast as it writes.
#define ORCH_OUTPUT_REST_MS 10
#define ORCH_OUTPUT_TRICKLE_BYTES 4096

/// A running attempt started at `now_ms`; `timeout_ms` <= 0 means none. `output_open`: whether streams are captured.
orch_attempt_lifecycle orch_attempt_start(int64_t now_ms, int64_t timeout_ms, int64_t grace_ms, int32_t output_open);

/// Time passed: a deadline may have run out.
orch_attempt_action orch_attempt_tick(orch_attempt_lifecycle *attempt, int64_t now_ms);

/// The caller asked to end it (control 'T'), or went away. Only a running attempt stops; its report says TERMINATED.
orch_attempt_action orch_attempt_terminate(orch_attempt_lifecycle *attempt, int64_t now_ms);

/// The leader was reaped with `status`; `group_alive`: its process group still has members.
orch_attempt_action orch_attempt_leader_exited(orch_attempt_lifecycle *attempt, int32_t status, int32_t group_alive, int64_t now_ms);

/// Every captured stream reached end of file.
orch_attempt_action orch_attempt_output_closed(orch_attempt_lifecycle *attempt);

/// `bytes` (more than none) were read from a captured stream, the most of any stream this time: a trickle lets the output
/// gather for ORCH_OUTPUT_REST_MS; more does not.
void orch_attempt_output_read(orch_attempt_lifecycle *attempt, int64_t bytes, int64_t now_ms);

/// Whether the captured streams are read now: always once the leader has exited (its output is drained at once), and
/// otherwise when no rest is running.
int32_t orch_attempt_reads_output(const orch_attempt_lifecycle *attempt, int64_t now_ms);

/// How long the poll loop may wait (at most `cap_ms`) before the next deadline, or the end of the output's rest.
int64_t orch_attempt_wait_ms(const orch_attempt_lifecycle *attempt, int64_t now_ms, int64_t cap_ms);

#endif
