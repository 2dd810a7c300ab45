#ifndef ORCHESTRATE_SUPERVISOR_H
#define ORCHESTRATE_SUPERVISOR_H

#include <stdint.h>
#include <sys/types.h>

/// What to launch and how to watch it.
///
/// The command runs as the leader of a new process group, watched by a small supervisor process
/// (a fork of the caller that never execs). The supervisor enforces the timeout, captures stdout and
/// stderr into files bounded to head + tail bytes, ends the whole group when the leader exits, and
/// ends the whole group when the caller dies (its control pipe closes or its parent changes).
typedef struct {
    const char *executable;          ///< absolute path of the program
    char *const *argv;               ///< NULL-terminated
    char *const *envp;               ///< NULL-terminated
    const char *working_directory;   ///< NULL: inherit
    const char *stdout_path;         ///< NULL: discard
    const char *stderr_path;         ///< NULL: discard
    int64_t capture_head_bytes;      ///< bytes kept from the start of each stream
    int64_t capture_tail_bytes;      ///< bytes kept from the end of each stream
    int64_t timeout_ms;              ///< <= 0: no timeout
    int64_t grace_ms;                ///< between SIGTERM and SIGKILL to the group
    int32_t uid;                     ///< -1: unchanged (root may run the command as another user)
    int32_t gid;                     ///< -1: unchanged
} orch_spawn_request;

typedef struct {
    pid_t supervisor_pid;
    pid_t leader_pid;    ///< also the process group id of the command
    int control_fd;      ///< write 'T' to end the group gracefully; closing it ends the group too
    int report_fd;       ///< the final orch_report arrives here
} orch_spawn_handle;

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

/// Launches a supervised command. Returns 0, or an errno value when nothing was started.
/// On an exec failure the handle is valid and the report says ORCH_SPAWN_FAILED.
int orch_spawn(const orch_spawn_request *request, orch_spawn_handle *handle);

/// Blocks until the final report arrives, reaps the supervisor and closes the handle's descriptors.
/// Returns 0, or -1 when the supervisor died without reporting (the report then says ORCH_SIGNALED).
int orch_wait(orch_spawn_handle *handle, orch_report *report);

/// Asks the supervisor to end the command's process group (SIGTERM, then SIGKILL after the grace).
void orch_terminate(const orch_spawn_handle *handle);

#endif
