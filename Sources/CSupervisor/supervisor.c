// The supervisor behind ProcessSupervisor. Everything that runs in the supervisor process (a fork of
// a multi-threaded Swift program) and in a command's child before exec uses only async-signal-safe
// calls and memory reserved before the fork.
#define _GNU_SOURCE
#include "supervisor.h"
#include "attempt_lifecycle.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#endif

#define REQUEST_FD 3
#define CONTROL_FD 4
#define REPORT_FD 5
#define PARENT_CHECK_MS 250
#define MAX_REQUEST (4 * 1024 * 1024)
#define MAX_STRINGS 16384
#define MAX_TAIL (1024 * 1024)
#define WIRE_MAGIC 0x6f726368u

// ---------------------------------------------------------------------------------------------
// Small helpers (async-signal-safe).

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void close_from(int lowest, int max_fd) {
#if defined(__linux__)
    if (syscall(SYS_close_range, (unsigned)lowest, ~0U, 0) == 0) return;
#endif
    for (int fd = lowest; fd < max_fd; fd++) close(fd);
}

static void set_cloexec(int fd) {
    int flags = fcntl(fd, F_GETFD);
    if (flags >= 0) fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
}

static int make_pipe(int fds[2]) {
#if defined(__linux__)
    return pipe2(fds, O_CLOEXEC) == 0 ? 0 : -1;
#else
    if (pipe(fds) != 0) return -1;
    set_cloexec(fds[0]);
    set_cloexec(fds[1]);
    return 0;
#endif
}

static void write_all(int fd, const void *data, size_t length) {
    const char *bytes = data;
    while (length > 0) {
        ssize_t written = write(fd, bytes, length);
        if (written < 0) {
            if (errno == EINTR) continue;
            return;
        }
        bytes += written;
        length -= (size_t)written;
    }
}

/// Reads exactly `length` bytes. Returns 0, or -1 on end of file or error.
static int read_full(int fd, void *data, size_t length) {
    char *bytes = data;
    size_t have = 0;
    while (have < length) {
        ssize_t n = read(fd, bytes + have, length - have);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        have += (size_t)n;
    }
    return 0;
}

static int format_decimal(char *out, int64_t value) {
    char digits[24];
    int n = 0;
    if (value == 0) digits[n++] = '0';
    while (value > 0) {
        digits[n++] = (char)('0' + value % 10);
        value /= 10;
    }
    for (int i = 0; i < n; i++) out[i] = digits[n - 1 - i];
    return n;
}

// ---------------------------------------------------------------------------------------------
// The request on the wire: a header, then NUL-terminated strings (executable, argv, envp, and the
// optional working directory, stdout path and stderr path).

typedef struct {
    uint32_t magic;
    uint32_t length;       // bytes of strings after the header
    int64_t head, tail, timeout_ms, grace_ms;
    int32_t uid, gid;
    uint32_t argc, envc;
    uint8_t has_cwd, has_stdout, has_stderr, reserved;
} wire_header;

/// One captured stream: the first `head` bytes go to the file, the last `tail` bytes stay in a ring
/// until the end, everything between is counted and dropped. The file is created on the first byte.
typedef struct {
    int pipe_fd;
    int file_fd;
    const char *path;
    int64_t head, tail;
    char *ring;
    int64_t total;
    int64_t ring_used;   // bytes seen after the head
} capture;

static void capture_open(capture *c) {
    if (c->file_fd >= 0 || c->path == NULL) return;
    // A new file, never one planted at the path: whatever is there goes (a link itself, not what it points at), and
    // the file is made exclusively without following a link.
    unlink(c->path);
    c->file_fd = open(c->path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (c->file_fd < 0) c->path = NULL;  // cannot write it: count only
}

static void capture_bytes(capture *c, const char *data, int64_t length) {
    c->total += length;
    capture_open(c);
    if (c->file_fd < 0) return;
    int64_t before = c->total - length;
    if (before < c->head) {
        int64_t to_head = c->head - before;
        if (to_head > length) to_head = length;
        write_all(c->file_fd, data, (size_t)to_head);
        data += to_head;
        length -= to_head;
    }
    if (length <= 0) return;
    if (c->tail > 0) {
        for (int64_t i = 0; i < length; i++) c->ring[(c->ring_used + i) % c->tail] = data[i];
    }
    c->ring_used += length;
}

static void capture_finish(capture *c) {
    if (c->file_fd >= 0 && c->ring_used > 0) {
        int64_t kept = c->ring_used < c->tail ? c->ring_used : c->tail;
        int64_t omitted = c->ring_used - kept;
        if (omitted > 0) {
            static const char prefix[] = "\n[orchestrate: ";
            static const char suffix[] = " bytes omitted]\n";
            char marker[96];
            int n = 0;
            memcpy(marker, prefix, sizeof(prefix) - 1);
            n += (int)sizeof(prefix) - 1;
            n += format_decimal(marker + n, omitted);
            memcpy(marker + n, suffix, sizeof(suffix) - 1);
            n += (int)sizeof(suffix) - 1;
            write_all(c->file_fd, marker, (size_t)n);
        }
        int64_t start = (c->ring_used - kept) % (c->tail > 0 ? c->tail : 1);
        int64_t first = kept < c->tail - start ? kept : c->tail - start;
        if (first > 0) write_all(c->file_fd, c->ring + start, (size_t)first);
        if (kept - first > 0) write_all(c->file_fd, c->ring, (size_t)(kept - first));
    }
    if (c->file_fd >= 0) close(c->file_fd);
    if (c->pipe_fd >= 0) close(c->pipe_fd);
    c->file_fd = -1;
    c->pipe_fd = -1;
}

// ---------------------------------------------------------------------------------------------
// The supervisor process.

static int sigchld_pipe_write = -1;
// Set up once by serve(): the signals whose disposition is not the default (each command's child resets them before
// exec, rather than all 64), and /dev/null for the child's stdin (opened once, close-on-exec).
static int non_default_signals[NSIG];
static int non_default_count = 0;
static int dev_null_fd = -1;
static char request_buffer[MAX_REQUEST];
static char *string_table[MAX_STRINGS];
static char out_ring[MAX_TAIL], err_ring[MAX_TAIL];
#if defined(__linux__)
static char child_stack[64 * 1024] __attribute__((aligned(16)));
#endif

static void on_sigchld(int sig) {
    (void)sig;
    int saved = errno;
    char byte = 'c';
    (void)write(sigchld_pipe_write, &byte, 1);
    errno = saved;
}

typedef struct {
    const char *executable;
    char *const *argv;
    char *const *envp;
    const char *cwd;
    int stdout_fd, stderr_fd, error_fd;
    int32_t uid, gid;
    pid_t supervisor;
} child_setup;

/// In the command's child, before exec. With CLONE_VM it runs on `child_stack` while the supervisor waits.
static int exec_child(void *argument) {
    const child_setup *setup = argument;
    // Ignored signals stay ignored across exec: give the command default dispositions and mask.
    struct sigaction defaults;
    memset(&defaults, 0, sizeof(defaults));
    defaults.sa_handler = SIG_DFL;
    for (int i = 0; i < non_default_count; i++) sigaction(non_default_signals[i], &defaults, NULL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    setpgid(0, 0);
    int null_fd = dev_null_fd;
    int out = setup->stdout_fd >= 0 ? setup->stdout_fd : null_fd;
    int err = setup->stderr_fd >= 0 ? setup->stderr_fd : null_fd;
    if (null_fd < 0 || dup2(null_fd, STDIN_FILENO) < 0 || dup2(out, STDOUT_FILENO) < 0 || dup2(err, STDERR_FILENO) < 0) goto fail;
    if (setup->gid >= 0 && (setgroups(0, NULL) != 0 || setgid((gid_t)setup->gid) != 0)) goto fail;
    if (setup->uid >= 0 && setuid((uid_t)setup->uid) != 0) goto fail;
    if (setup->cwd != NULL && chdir(setup->cwd) != 0) goto fail;
#if defined(__linux__)
    // The command's leader dies with its supervisor, so a supervisor killed outright leaves no command running unwatched
    // (the coordinator ends the rest of the group). Set after the user changes, which would clear it. A supervisor
    // already gone by now: nothing is started.
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) goto fail;
    if (getppid() != setup->supervisor) _exit(127);
#endif
    execve(setup->executable, setup->argv, setup->envp);
fail:;
    int code = errno;
    write_all(setup->error_fd, &code, sizeof(code));
    _exit(127);
}

static pid_t start_child(child_setup *setup) {
#if defined(__linux__)
    // Like posix_spawn: share the memory (no page tables copied), the supervisor waits until exec.
    sigset_t all, previous;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, &previous);
    pid_t pid = clone(exec_child, child_stack + sizeof(child_stack), CLONE_VM | CLONE_VFORK | SIGCHLD, setup);
    int saved = errno;
    sigprocmask(SIG_SETMASK, &previous, NULL);
    errno = saved;
    return pid;
#else
    pid_t pid = fork();
    if (pid == 0) exec_child(setup);
    return pid;
#endif
}

static void send_report(int32_t kind, int32_t value, pid_t pid, int64_t out_bytes, int64_t err_bytes) {
    orch_report report;
    memset(&report, 0, sizeof(report));
    report.kind = kind;
    report.value = value;
    report.pid = (int32_t)pid;
    report.stdout_bytes = out_bytes;
    report.stderr_bytes = err_bytes;
    write_all(REPORT_FD, &report, sizeof(report));
}

static int32_t status_value(int status) {
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return -1;
}

/// Waits (at most 2 s) until the killed group is gone, reaping the descendants that came to us.
static void reap_group(pid_t group) {
    int64_t deadline = now_ms() + 2000;
    for (;;) {
        int status;
        pid_t reaped = waitpid(-1, &status, WNOHANG);
        if (reaped > 0) continue;
        if (kill(-group, 0) != 0) return;  // the group is gone (what is left escaped it with setsid)
        if (now_ms() > deadline) return;
        struct timespec pause = {0, 5 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
}

/// Carries out what the attempt's lifecycle decided for the command's process group.
static void perform(orch_attempt_action action, pid_t leader) {
    if (action == ORCH_ACTION_TERMINATE_GROUP) kill(-leader, SIGTERM);
    if (action == ORCH_ACTION_KILL_GROUP) kill(-leader, SIGKILL);
}

static int parent_alive(pid_t parent, int control_open) {
    return control_open && getppid() == parent;
}

/// Runs one request to its end and reports. Returns 0, or -1 when the caller is gone.
static int run_request(const wire_header *header, pid_t parent, int *control_open) {
    // Parse the strings.
    uint32_t needed = 1 + header->argc + 1 + header->envc + 1;
    if (needed + 3 > MAX_STRINGS) {
        send_report(ORCH_SPAWN_FAILED, E2BIG, 0, 0, 0);
        return 0;
    }
    char *cursor = request_buffer, *end = request_buffer + header->length;
    char *strings[3] = {NULL, NULL, NULL};
    char **argv = string_table + 1;
    char **envp = argv + header->argc + 1;
    string_table[0] = cursor;
    cursor += strlen(cursor) + 1;
    for (uint32_t i = 0; i < header->argc && cursor < end; i++) { argv[i] = cursor; cursor += strlen(cursor) + 1; }
    argv[header->argc] = NULL;
    for (uint32_t i = 0; i < header->envc && cursor < end; i++) { envp[i] = cursor; cursor += strlen(cursor) + 1; }
    envp[header->envc] = NULL;
    uint8_t flags[3] = {header->has_cwd, header->has_stdout, header->has_stderr};
    for (int i = 0; i < 3; i++) {
        if (flags[i] && cursor < end) { strings[i] = cursor; cursor += strlen(cursor) + 1; }
    }

    int64_t tail = header->tail > MAX_TAIL ? MAX_TAIL : (header->tail < 0 ? 0 : header->tail);
    capture out = {.pipe_fd = -1, .file_fd = -1, .path = strings[1], .head = header->head, .tail = tail, .ring = out_ring};
    capture err = {.pipe_fd = -1, .file_fd = -1, .path = strings[2], .head = header->head, .tail = tail, .ring = err_ring};
    int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1}, error_pipe[2] = {-1, -1};
    if ((out.path && make_pipe(out_pipe) != 0) || (err.path && make_pipe(err_pipe) != 0) || make_pipe(error_pipe) != 0) {
        int code = errno;
        for (int i = 0; i < 2; i++) { if (out_pipe[i] >= 0) close(out_pipe[i]); if (err_pipe[i] >= 0) close(err_pipe[i]); }
        send_report(ORCH_SPAWN_FAILED, code, 0, 0, 0);
        return 0;
    }
    out.pipe_fd = out_pipe[0];
    err.pipe_fd = err_pipe[0];

    child_setup setup = {
        .executable = string_table[0], .argv = argv, .envp = envp, .cwd = strings[0],
        .stdout_fd = out_pipe[1], .stderr_fd = err_pipe[1], .error_fd = error_pipe[1],
        .uid = header->uid, .gid = header->gid, .supervisor = getpid(),
    };
    pid_t leader = start_child(&setup);
    int spawn_errno = errno;
    if (out_pipe[1] >= 0) close(out_pipe[1]);
    if (err_pipe[1] >= 0) close(err_pipe[1]);
    close(error_pipe[1]);
    if (leader < 0) {
        close(error_pipe[0]);
        capture_finish(&out);
        capture_finish(&err);
        send_report(ORCH_SPAWN_FAILED, spawn_errno, 0, 0, 0);
        return 0;
    }
    setpgid(leader, leader);  // both sides set it: no window where the group does not exist yet
    int exec_errno = 0;
    int failed = read_full(error_pipe[0], &exec_errno, sizeof(exec_errno)) == 0;
    close(error_pipe[0]);
    if (failed) {
        waitpid(leader, NULL, 0);
        capture_finish(&out);
        capture_finish(&err);
        send_report(ORCH_SPAWN_FAILED, exec_errno, leader, 0, 0);
        return 0;
    }
    send_report(ORCH_STARTED, 0, leader, 0, 0);

    orch_attempt_lifecycle attempt = orch_attempt_start(now_ms(), header->timeout_ms, header->grace_ms, out.pipe_fd >= 0 || err.pipe_fd >= 0);
    // As much as a Linux pipe holds by default: one read takes all a fast writer left.
    static char buffer[65536];

    while (attempt.phase != ORCH_ATTEMPT_DONE) {
        int64_t now = now_ms();
        perform(orch_attempt_tick(&attempt, now), leader);
        if (*control_open && !parent_alive(parent, *control_open)) *control_open = 0;
        // The caller is gone: nobody will read a result. End the group.
        if (!*control_open) perform(orch_attempt_terminate(&attempt, now), leader);
        if (attempt.phase == ORCH_ATTEMPT_DONE) break;

        struct pollfd fds[4];
        int count = 0, control_index = -1, out_index = -1, err_index = -1;
        int reads_output = orch_attempt_reads_output(&attempt, now);
        fds[count].fd = REPORT_FD + 1; fds[count].events = POLLIN; count++;  // the SIGCHLD pipe
        if (*control_open) { control_index = count; fds[count].fd = CONTROL_FD; fds[count].events = POLLIN; count++; }
        if (out.pipe_fd >= 0 && reads_output) { out_index = count; fds[count].fd = out.pipe_fd; fds[count].events = POLLIN; count++; }
        if (err.pipe_fd >= 0 && reads_output) { err_index = count; fds[count].fd = err.pipe_fd; fds[count].events = POLLIN; count++; }
        int ready = poll(fds, (nfds_t)count, (int)orch_attempt_wait_ms(&attempt, now, PARENT_CHECK_MS));
        if (ready < 0 && errno != EINTR) break;
        if (ready > 0) {
            if (fds[0].revents) {
                char drain[64];
                (void)read(REPORT_FD + 1, drain, sizeof(drain));
            }
            if (control_index >= 0 && fds[control_index].revents) {
                char byte = 0;
                ssize_t n = read(CONTROL_FD, &byte, 1);
                if (n <= 0) *control_open = 0;
                if (n <= 0 || byte == 'T') perform(orch_attempt_terminate(&attempt, now_ms()), leader);
            }
            capture *streams[2] = {&out, &err};
            int indexes[2] = {out_index, err_index};
            ssize_t most = 0;  // the largest read: a trickle lets the output gather
            for (int s = 0; s < 2; s++) {
                if (indexes[s] < 0 || !fds[indexes[s]].revents) continue;
                ssize_t n = read(streams[s]->pipe_fd, buffer, sizeof(buffer));
                if (n > most) most = n;
                if (n > 0) {
                    capture_bytes(streams[s], buffer, n);
                } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
                    close(streams[s]->pipe_fd);
                    streams[s]->pipe_fd = -1;
                    if (out.pipe_fd < 0 && err.pipe_fd < 0) perform(orch_attempt_output_closed(&attempt), leader);
                }
            }
            // Only a read says how fast the command writes (another wake, a child's exit, says nothing of it).
            if (most > 0) orch_attempt_output_read(&attempt, most, now_ms());
        }
        for (;;) {
            int status = 0;
            pid_t reaped = waitpid(-1, &status, WNOHANG);
            if (reaped <= 0) break;
            if (reaped != leader) continue;  // an orphaned descendant: reaped, nothing more
            perform(orch_attempt_leader_exited(&attempt, status, kill(-leader, 0) == 0, now_ms()), leader);
        }
    }
    if (kill(-leader, 0) == 0) kill(-leader, SIGKILL);
    reap_group(leader);
    capture_finish(&out);
    capture_finish(&err);
    int32_t kind = attempt.report_kind, value = status_value(attempt.leader_status);
    if (kind == ORCH_EXITED && WIFSIGNALED(attempt.leader_status)) { kind = ORCH_SIGNALED; value = WTERMSIG(attempt.leader_status); }
    send_report(kind, value, leader, out.total, err.total);
    return *control_open ? 0 : -1;
}

/// The supervisor's main loop. Never returns.
static void serve(pid_t parent, int max_fd) {
    // Signals meant for the terminal's foreground group are the coordinator's business.
    struct sigaction ignore;
    memset(&ignore, 0, sizeof(ignore));
    ignore.sa_handler = SIG_IGN;
    int ignored[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGTSTP, SIGUSR1, SIGUSR2};
    for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++) sigaction(ignored[i], &ignore, NULL);
    close_from(REPORT_FD + 1, max_fd);
    // A group of its own: a SIGKILL to the coordinator's group (a cancelled CI job) must leave the
    // supervisor alive to end the command's group when it sees its parent gone.
    setpgid(0, 0);
#if defined(__linux__)
    // Orphaned descendants come to the supervisor, which reaps them: when it reports, they are gone.
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
#endif
    int sigchld_pipe[2];
    if (pipe(sigchld_pipe) != 0) _exit(1);
    // The SIGCHLD pipe's read end lives at REPORT_FD + 1, where the poll loop expects it.
    if (sigchld_pipe[0] != REPORT_FD + 1) {
        dup2(sigchld_pipe[0], REPORT_FD + 1);
        close(sigchld_pipe[0]);
    }
    set_cloexec(REPORT_FD + 1);
    set_cloexec(sigchld_pipe[1]);
    fcntl(sigchld_pipe[1], F_SETFL, O_NONBLOCK);
    fcntl(REPORT_FD + 1, F_SETFL, O_NONBLOCK);
    sigchld_pipe_write = sigchld_pipe[1];
    set_cloexec(REQUEST_FD);
    set_cloexec(CONTROL_FD);
    set_cloexec(REPORT_FD);
    struct sigaction child_action;
    memset(&child_action, 0, sizeof(child_action));
    child_action.sa_handler = on_sigchld;
    child_action.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    sigaction(SIGCHLD, &child_action, NULL);
    for (int sig = 1; sig < NSIG; sig++) {
        struct sigaction current;
        if (sig == SIGKILL || sig == SIGSTOP || sigaction(sig, NULL, &current) != 0) continue;
        if (current.sa_handler != SIG_DFL) non_default_signals[non_default_count++] = sig;
    }
    dev_null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);

    int control_open = 1;
    for (;;) {
        struct pollfd fds[2] = {{.fd = CONTROL_FD, .events = POLLIN}, {.fd = REQUEST_FD, .events = POLLIN}};
        int ready = poll(fds, 2, PARENT_CHECK_MS);
        if (getppid() != parent) _exit(0);
        if (ready < 0 && errno != EINTR) _exit(1);
        if (ready <= 0) continue;
        if (fds[0].revents) {
            // A stale 'T' for a command that already ended, or the caller closed the pipe.
            char drain[64];
            if (read(CONTROL_FD, drain, sizeof(drain)) <= 0) _exit(0);
        }
        if (!fds[1].revents) continue;
        wire_header header;
        if (read_full(REQUEST_FD, &header, sizeof(header)) != 0) _exit(0);
        if (header.magic != WIRE_MAGIC || header.length > MAX_REQUEST || header.length == 0) _exit(2);
        if (read_full(REQUEST_FD, request_buffer, header.length) != 0) _exit(0);
        request_buffer[header.length - 1] = '\0';
        if (run_request(&header, parent, &control_open) != 0) _exit(0);
    }
}

// ---------------------------------------------------------------------------------------------
// The caller's side.

int orch_supervisor_start(orch_supervisor *supervisor) {
    int request[2], control[2], report[2];
    if (make_pipe(request) != 0) return errno;
    if (make_pipe(control) != 0) { int code = errno; close(request[0]); close(request[1]); return code; }
    if (make_pipe(report) != 0) {
        int code = errno;
        close(request[0]); close(request[1]); close(control[0]); close(control[1]);
        return code;
    }
    struct rlimit limit;
    int max_fd = 65536;
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < (rlim_t)max_fd) {
        max_fd = (int)limit.rlim_cur;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        int code = errno;
        close(request[0]); close(request[1]); close(control[0]); close(control[1]); close(report[0]); close(report[1]);
        return code;
    }
    if (pid == 0) {
        // Move the three descriptors the supervisor keeps to 3, 4 and 5 (above anything they may sit on).
        int keep[3] = {request[0], control[0], report[1]};
        for (int i = 0; i < 3; i++) keep[i] = fcntl(keep[i], F_DUPFD, 64);
        for (int i = 0; i < 3; i++) dup2(keep[i], REQUEST_FD + i);
        serve(parent, max_fd);
        _exit(0);
    }
    close(request[0]);
    close(control[0]);
    close(report[1]);
    supervisor->pid = pid;
    supervisor->request_fd = request[1];
    supervisor->control_fd = control[1];
    supervisor->report_fd = report[0];
    return 0;
}

int orch_supervisor_submit(orch_supervisor *supervisor, const orch_spawn_request *request, orch_report *first) {
    memset(first, 0, sizeof(*first));
    if (request->length == 0 || request->length > MAX_REQUEST) return E2BIG;
    wire_header header;
    memset(&header, 0, sizeof(header));
    header.magic = WIRE_MAGIC;
    header.length = request->length;
    header.head = request->capture_head_bytes;
    header.tail = request->capture_tail_bytes;
    header.timeout_ms = request->timeout_ms;
    header.grace_ms = request->grace_ms;
    header.uid = request->uid;
    header.gid = request->gid;
    header.argc = request->argc;
    header.envc = request->envc;
    header.has_cwd = request->has_working_directory;
    header.has_stdout = request->has_stdout_path;
    header.has_stderr = request->has_stderr_path;
    // Header and strings in one write (the supervisor reads the header, then the strings).
    struct iovec parts[2] = {{&header, sizeof(header)}, {(void *)request->strings, request->length}};
    size_t total = sizeof(header) + request->length;
    while (total > 0) {
        ssize_t n = writev(supervisor->request_fd, parts, 2);
        if (n < 0) {
            if (errno == EINTR) continue;
            return EPIPE;
        }
        total -= (size_t)n;
        for (int i = 0; i < 2 && n > 0; i++) {
            size_t used = (size_t)n < parts[i].iov_len ? (size_t)n : parts[i].iov_len;
            parts[i].iov_base = (char *)parts[i].iov_base + used;
            parts[i].iov_len -= used;
            n -= (ssize_t)used;
        }
    }
    if (read_full(supervisor->report_fd, first, sizeof(*first)) != 0) return EPIPE;
    return 0;
}

int orch_supervisor_wait(orch_supervisor *supervisor, orch_report *report) {
    memset(report, 0, sizeof(*report));
    if (read_full(supervisor->report_fd, report, sizeof(*report)) != 0) {
        report->kind = ORCH_SIGNALED;
        report->value = SIGKILL;
        return -1;
    }
    return 0;
}

void orch_supervisor_terminate(const orch_supervisor *supervisor) {
    if (supervisor->control_fd < 0) return;
    char byte = 'T';
    (void)write(supervisor->control_fd, &byte, 1);
}

void orch_supervisor_stop(orch_supervisor *supervisor) {
    if (supervisor->request_fd >= 0) close(supervisor->request_fd);
    supervisor->request_fd = -1;
    if (supervisor->pid > 0) {
        int status;
        while (waitpid(supervisor->pid, &status, 0) < 0 && errno == EINTR) {}
    }
    supervisor->pid = 0;
    if (supervisor->control_fd >= 0) close(supervisor->control_fd);
    if (supervisor->report_fd >= 0) close(supervisor->report_fd);
    supervisor->control_fd = -1;
    supervisor->report_fd = -1;
}
