#ifndef ORCHESTRATE_SUPERVISOR_H
#define ORCHESTRATE_SUPERVISOR_H

#include <stdint.h>
#include <sys/types.h>

/// What to launch and how to watch it.
///
/// Commands run as the leader of a new process group, watched by a supervisor process: a fork of the
/// caller, made once and reused for any number of commands one after another, that never execs. It
/// starts each command without copying the caller's memory (clone with CLONE_VM|CLONE_VFORK on
/// Linux), enforces the timeout on the whole group, captures stdout and stderr into files bounded to
/// head + tail bytes (created only when something is written), ends what the leader left behind in
/// its group, reaps orphaned descendants, and ends the running group when the caller dies.
///
/// The strings travel packed, each NUL-terminated, in this order: the executable (absolute path), `argc`
/// arguments (argv[0] first), `envc` environment entries (`NAME=value`), then the working directory, the
/// stdout path and the stderr path when their `has_` flag is set (otherwise: inherit, discard, discard).
typedef struct {
    const char *strings;
    uint32_t length;                 ///< bytes of `strings`
    uint32_t argc, envc;
    uint8_t has_working_directory, has_stdout_path, has_stderr_path;
    int64_t capture_head_bytes;      ///< bytes kept from the start of each stream
    int64_t capture_tail_bytes;      ///< bytes kept from the end of each stream (at most 1 MiB)
    int64_t timeout_ms;              ///< <= 0: no timeout
    int64_t grace_ms;                ///< between SIGTERM and SIGKILL to the group
    int32_t uid;                     ///< -1: unchanged (root may run the command as another user)
    int32_t gid;                     ///< -1: unchanged
} orch_spawn_request;

/// A supervisor process and the pipes to it.
typedef struct {
    pid_t pid;
    int request_fd;   ///< requests go here; closing it lets the supervisor exit when idle
    int control_fd;   ///< 'T' ends the running command's group; closing it (the caller died) too
    int report_fd;    ///< STARTED and final reports come from here
} orch_supervisor;

enum {
    ORCH_STARTED = 0,
    ORCH_EXITED = 1,        ///< value: exit status
    ORCH_SIGNALED = 2,      ///< value: signal number
    ORCH_TIMED_OUT = 3,     ///< value: how the leader ended (exit status or 128+signal)
    ORCH_SPAWN_FAILED = 4,  ///< value: errno of the failed exec or set-up step
    ORCH_TERMINATED = 5,    ///< ended on request (control 'T'); value as for ORCH_TIMED_OUT
};

typedef struct {
    int32_t kind;
    int32_t value;
    int32_t pid;
    int32_t reserved;
    int64_t stdout_bytes;   ///< bytes the command wrote to stdout in all
    int64_t stderr_bytes;   ///< bytes the command wrote to stderr in all
} orch_report;

/// Forks a supervisor. Returns 0 or an errno value.
int orch_supervisor_start(orch_supervisor *supervisor);

/// Starts a command and waits for the STARTED (or SPAWN_FAILED) report, which it stores in `first`.
/// Returns 0, or an errno value when the supervisor could not take the request (it is gone).
int orch_supervisor_submit(orch_supervisor *supervisor, const orch_spawn_request *request, orch_report *first);

/// Blocks until the final report of the running command. Returns 0, or -1 when the supervisor died
/// (the report then says ORCH_SIGNALED with SIGKILL).
int orch_supervisor_wait(orch_supervisor *supervisor, orch_report *report);

/// Asks the supervisor to end the running command's group (SIGTERM, then SIGKILL after the grace).
void orch_supervisor_terminate(const orch_supervisor *supervisor);

/// Lets the supervisor exit, reaps it and closes the pipes.
void orch_supervisor_stop(orch_supervisor *supervisor);

#endif
