// The supervised spawn behind ProcessSupervisor. Everything after fork() in the supervisor and in
// the command's child uses only async-signal-safe calls: the caller is a multi-threaded Swift process.
#define _GNU_SOURCE
#include "supervisor.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#include <sys/syscall.h>
#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#endif

#define CONTROL_FD 3
#define REPORT_FD 4
#define PARENT_CHECK_MS 250
#define DRAIN_AFTER_KILL_MS 200

static int sigchld_pipe_write = -1;

static void on_sigchld(int sig) {
    (void)sig;
    int saved = errno;
    char byte = 'c';
    (void)write(sigchld_pipe_write, &byte, 1);
    errno = saved;
}

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

static int set_cloexec(int fd) {
    int flags = fcntl(fd, F_GETFD);
    return flags < 0 ? -1 : fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
}

static int make_pipe(int fds[2]) {
    if (pipe(fds) != 0) return -1;
    set_cloexec(fds[0]);
    set_cloexec(fds[1]);
    return 0;
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

/// One captured stream: the first `head` bytes go straight to the file, the last `tail` bytes
/// stay in a ring until the end, everything between is counted and dropped.
typedef struct {
    int pipe_fd;
    int file_fd;
    int64_t head;
    int64_t tail;
    char *ring;
    int64_t total;
    int64_t ring_used;   // bytes seen after the head
} capture;

static void capture_bytes(capture *c, const char *data, int64_t length) {
    c->total += length;
    if (c->file_fd < 0) return;
    int64_t written_so_far = c->total - length;
    if (written_so_far < c->head) {
        int64_t to_head = c->head - written_so_far;
        if (to_head > length) to_head = length;
        write_all(c->file_fd, data, (size_t)to_head);
        data += to_head;
        length -= to_head;
    }
    if (length <= 0 || c->tail <= 0 || c->ring == NULL) {
        c->ring_used += length;
        return;
    }
    for (int64_t i = 0; i < length; i++) {
        c->ring[(c->ring_used + i) % c->tail] = data[i];
    }
    c->ring_used += length;
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

static void capture_finish(capture *c) {
    if (c->file_fd < 0) return;
    if (c->ring_used > 0 && c->tail > 0 && c->ring != NULL) {
        int64_t kept = c->ring_used < c->tail ? c->ring_used : c->tail;
        int64_t omitted = c->ring_used - kept;
        if (omitted > 0) {
            char marker[96];
            const char *prefix = "\n[orchestrate: ";
            const char *suffix = " bytes omitted]\n";
            int n = 0;
            memcpy(marker + n, prefix, strlen(prefix));
            n += (int)strlen(prefix);
            n += format_decimal(marker + n, omitted);
            memcpy(marker + n, suffix, strlen(suffix));
            n += (int)strlen(suffix);
            write_all(c->file_fd, marker, (size_t)n);
        }
        int64_t start = c->ring_used - kept;
        for (int64_t i = 0; i < kept; i++) {
            char byte = c->ring[(start + i) % c->tail];
            // Small writes are rare here (only the tail of an oversized stream); keep it simple.
            write_all(c->file_fd, &byte, 1);
        }
    }
    close(c->file_fd);
    c->file_fd = -1;
}

static int open_capture_file(const char *path) {
    if (path == NULL) return -1;
    return open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

static void report_and_exit(int32_t kind, int32_t value, pid_t pid, const capture *out, const capture *err) {
    orch_report report;
    memset(&report, 0, sizeof(report));
    report.kind = kind;
    report.value = value;
    report.pid = (int32_t)pid;
    report.stdout_bytes = out ? out->total : 0;
    report.stderr_bytes = err ? err->total : 0;
    write_all(REPORT_FD, &report, sizeof(report));
    _exit(0);
}

static int32_t status_value(int status) {
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return -1;
}

static void exec_child(const orch_spawn_request *request, int out_write, int err_write, int error_pipe) {
    // Ignored signals stay ignored across exec: give the command default dispositions.
    struct sigaction defaults;
    memset(&defaults, 0, sizeof(defaults));
    defaults.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; sig++) {
        if (sig == SIGKILL || sig == SIGSTOP) continue;
        sigaction(sig, &defaults, NULL);
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    setpgid(0, 0);

    int null_fd = open("/dev/null", O_RDWR);
    if (null_fd < 0) goto fail;
    if (out_write < 0) out_write = null_fd;
    if (err_write < 0) err_write = null_fd;
    if (dup2(null_fd, STDIN_FILENO) < 0) goto fail;
    if (dup2(out_write, STDOUT_FILENO) < 0) goto fail;
    if (dup2(err_write, STDERR_FILENO) < 0) goto fail;

    if (request->gid >= 0) {
        if (setgroups(0, NULL) != 0) goto fail;
        if (setgid((gid_t)request->gid) != 0) goto fail;
    }
    if (request->uid >= 0 && setuid((uid_t)request->uid) != 0) goto fail;
    if (request->working_directory != NULL && chdir(request->working_directory) != 0) goto fail;
    execve(request->executable, request->argv, request->envp);
fail:;
    int code = errno;
    write_all(error_pipe, &code, sizeof(code));
    _exit(127);
}

/// Waits (at most 2 s) until the killed group is gone, reaping the descendants that came to us.
static void reap_group(pid_t group) {
    int64_t deadline = now_ms() + 2000;
    for (;;) {
        int status;
        pid_t reaped = waitpid(-1, &status, WNOHANG);
        if (reaped > 0) continue;
        if (reaped < 0 && errno == ECHILD && kill(-group, 0) != 0) return;
        if (kill(-group, 0) != 0 && reaped == 0) return;  // what is left escaped the group (setsid)
        if (now_ms() > deadline) return;
        struct timespec pause = {0, 5 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
}

/// The supervisor process. Never returns.
static void supervise(const orch_spawn_request *request, pid_t parent, int max_fd,
                      char *out_ring, char *err_ring) {
    // Signals meant for the terminal's foreground group are the coordinator's business.
    struct sigaction ignore;
    memset(&ignore, 0, sizeof(ignore));
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGINT, &ignore, NULL);
    sigaction(SIGTERM, &ignore, NULL);
    sigaction(SIGHUP, &ignore, NULL);
    sigaction(SIGQUIT, &ignore, NULL);
    sigaction(SIGPIPE, &ignore, NULL);
    sigaction(SIGTSTP, &ignore, NULL);
    close_from(REPORT_FD + 1, max_fd);
    // A group of its own: a SIGKILL to the coordinator's group (a CI job cancelled) must leave the
    // supervisor alive to end the command's group when it sees its parent gone.
    setpgid(0, 0);
#if defined(__linux__)
    // Orphaned descendants come to the supervisor, which reaps them: when it reports, they are gone.
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
#endif

    capture out = {.pipe_fd = -1, .file_fd = -1, .head = request->capture_head_bytes,
                   .tail = request->capture_tail_bytes, .ring = out_ring};
    capture err = {.pipe_fd = -1, .file_fd = -1, .head = request->capture_head_bytes,
                   .tail = request->capture_tail_bytes, .ring = err_ring};

    int sigchld_pipe[2], out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1}, error_pipe[2];
    if (make_pipe(sigchld_pipe) != 0 || make_pipe(error_pipe) != 0) report_and_exit(ORCH_SPAWN_FAILED, errno, 0, NULL, NULL);
    fcntl(sigchld_pipe[1], F_SETFL, O_NONBLOCK);
    sigchld_pipe_write = sigchld_pipe[1];
    struct sigaction child_action;
    memset(&child_action, 0, sizeof(child_action));
    child_action.sa_handler = on_sigchld;
    child_action.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    sigaction(SIGCHLD, &child_action, NULL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);

    if (request->stdout_path != NULL) {
        out.file_fd = open_capture_file(request->stdout_path);
        if (out.file_fd < 0 || make_pipe(out_pipe) != 0) report_and_exit(ORCH_SPAWN_FAILED, errno, 0, NULL, NULL);
        out.pipe_fd = out_pipe[0];
    }
    if (request->stderr_path != NULL) {
        err.file_fd = open_capture_file(request->stderr_path);
        if (err.file_fd < 0 || make_pipe(err_pipe) != 0) report_and_exit(ORCH_SPAWN_FAILED, errno, 0, NULL, NULL);
        err.pipe_fd = err_pipe[0];
    }

    pid_t leader = fork();
    if (leader < 0) report_and_exit(ORCH_SPAWN_FAILED, errno, 0, NULL, NULL);
    if (leader == 0) exec_child(request, out_pipe[1], err_pipe[1], error_pipe[1]);
    setpgid(leader, leader);  // both sides set it: no window where the group does not exist yet
    if (out_pipe[1] >= 0) close(out_pipe[1]);
    if (err_pipe[1] >= 0) close(err_pipe[1]);
    close(error_pipe[1]);

    int exec_errno = 0;
    ssize_t got;
    do { got = read(error_pipe[0], &exec_errno, sizeof(exec_errno)); } while (got < 0 && errno == EINTR);
    close(error_pipe[0]);
    if (got == (ssize_t)sizeof(exec_errno)) {
        waitpid(leader, NULL, 0);
        report_and_exit(ORCH_SPAWN_FAILED, exec_errno, leader, NULL, NULL);
    }
    orch_report started;
    memset(&started, 0, sizeof(started));
    started.kind = ORCH_STARTED;
    started.pid = (int32_t)leader;
    write_all(REPORT_FD, &started, sizeof(started));

    int64_t start = now_ms();
    int64_t timeout_at = request->timeout_ms > 0 ? start + request->timeout_ms : -1;
    int64_t kill_at = -1;          // when SIGKILL goes to the group
    int64_t drain_until = -1;      // after the group is gone, how long to keep reading pipes
    int leader_done = 0, leader_status = 0;
    int timed_out = 0, terminated = 0, control_open = 1;
    char buffer[16384];

    for (;;) {
        if (leader_done && out.pipe_fd < 0 && err.pipe_fd < 0) break;
        int64_t now = now_ms();
        if (drain_until >= 0 && now >= drain_until) break;

        if (!leader_done && timeout_at >= 0 && now >= timeout_at && !timed_out && !terminated) {
            timed_out = 1;
            kill(-leader, SIGTERM);
            kill_at = now + request->grace_ms;
        }
        if (kill_at >= 0 && now >= kill_at) {
            kill(-leader, SIGKILL);
            kill_at = -1;
            if (leader_done && drain_until < 0) drain_until = now + DRAIN_AFTER_KILL_MS;
        }
        if (control_open && getppid() != parent) {
            // The coordinator is gone: nobody will ever read a result. End the group.
            control_open = 0;
            if (!terminated) {
                terminated = 1;
                kill(-leader, SIGTERM);
                kill_at = now + request->grace_ms;
            }
        }

        int64_t wait_ms = PARENT_CHECK_MS;
        if (timeout_at >= 0 && !timed_out && !leader_done && timeout_at - now < wait_ms) wait_ms = timeout_at - now;
        if (kill_at >= 0 && kill_at - now < wait_ms) wait_ms = kill_at - now;
        if (drain_until >= 0 && drain_until - now < wait_ms) wait_ms = drain_until - now;
        if (wait_ms < 0) wait_ms = 0;

        struct pollfd fds[4];
        int count = 0;
        int control_index = -1, out_index = -1, err_index = -1;
        fds[count].fd = sigchld_pipe[0]; fds[count].events = POLLIN; count++;
        if (control_open) { control_index = count; fds[count].fd = CONTROL_FD; fds[count].events = POLLIN; count++; }
        if (out.pipe_fd >= 0) { out_index = count; fds[count].fd = out.pipe_fd; fds[count].events = POLLIN; count++; }
        if (err.pipe_fd >= 0) { err_index = count; fds[count].fd = err.pipe_fd; fds[count].events = POLLIN; count++; }
        int ready = poll(fds, (nfds_t)count, (int)wait_ms);
        if (ready < 0 && errno != EINTR) break;
        if (ready <= 0) continue;

        if (fds[0].revents) {
            char drain[64];
            (void)read(sigchld_pipe[0], drain, sizeof(drain));
        }
        if (control_index >= 0 && fds[control_index].revents) {
            char byte = 0;
            ssize_t n = read(CONTROL_FD, &byte, 1);
            if (n <= 0) control_open = 0;   // the coordinator died: end the group
            if ((n <= 0 || byte == 'T') && !terminated && !leader_done) {
                terminated = 1;
                kill(-leader, SIGTERM);
                kill_at = now_ms() + request->grace_ms;
            }
        }
        capture *streams[2] = {&out, &err};
        int indexes[2] = {out_index, err_index};
        for (int s = 0; s < 2; s++) {
            if (indexes[s] < 0 || !fds[indexes[s]].revents) continue;
            ssize_t n = read(streams[s]->pipe_fd, buffer, sizeof(buffer));
            if (n > 0) {
                capture_bytes(streams[s], buffer, n);
            } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
                close(streams[s]->pipe_fd);
                streams[s]->pipe_fd = -1;
            }
        }
        for (;;) {
            int status = 0;
            pid_t reaped = waitpid(-1, &status, WNOHANG);
            if (reaped <= 0) break;
            if (reaped != leader || leader_done) continue;  // an orphaned descendant: reaped, nothing more
            {
                leader_done = 1;
                leader_status = status;
                // Whatever the leader left behind in its group ends with it.
                if (kill(-leader, 0) == 0) {
                    kill(-leader, SIGTERM);
                    int64_t grace = request->grace_ms < 1000 ? request->grace_ms : 1000;
                    if (kill_at < 0 || kill_at > now_ms() + grace) kill_at = now_ms() + grace;
                } else if (drain_until < 0) {
                    drain_until = now_ms() + DRAIN_AFTER_KILL_MS;
                }
            }
        }
    }
    if (kill(-leader, 0) == 0) kill(-leader, SIGKILL);
    reap_group(leader);
    capture_finish(&out);
    capture_finish(&err);
    int32_t kind, value;
    if (timed_out) { kind = ORCH_TIMED_OUT; value = status_value(leader_status); }
    else if (terminated) { kind = ORCH_TERMINATED; value = status_value(leader_status); }
    else if (WIFSIGNALED(leader_status)) { kind = ORCH_SIGNALED; value = WTERMSIG(leader_status); }
    else { kind = ORCH_EXITED; value = WEXITSTATUS(leader_status); }
    report_and_exit(kind, value, leader, &out, &err);
}

static int read_report(int fd, orch_report *report) {
    size_t have = 0;
    char *bytes = (char *)report;
    while (have < sizeof(*report)) {
        ssize_t n = read(fd, bytes + have, sizeof(*report) - have);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        have += (size_t)n;
    }
    return 0;
}

int orch_spawn(const orch_spawn_request *request, orch_spawn_handle *handle) {
    int control[2], report[2];
    if (make_pipe(control) != 0) return errno;
    if (make_pipe(report) != 0) {
        int code = errno;
        close(control[0]);
        close(control[1]);
        return code;
    }
    struct rlimit limit;
    int max_fd = 65536;
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < (rlim_t)max_fd) {
        max_fd = (int)limit.rlim_cur;
    }
    char *out_ring = NULL, *err_ring = NULL;
    if (request->capture_tail_bytes > 0) {
        out_ring = malloc((size_t)request->capture_tail_bytes);
        err_ring = malloc((size_t)request->capture_tail_bytes);
    }
    pid_t parent = getpid();
    pid_t supervisor = fork();
    if (supervisor < 0) {
        int code = errno;
        close(control[0]); close(control[1]); close(report[0]); close(report[1]);
        free(out_ring); free(err_ring);
        return code;
    }
    if (supervisor == 0) {
        // Move the two descriptors the supervisor keeps to 3 and 4, then close everything else.
        int control_read = control[0], report_write = report[1];
        if (report_write == CONTROL_FD) report_write = dup(report_write);
        if (control_read != CONTROL_FD) dup2(control_read, CONTROL_FD);
        if (report_write != REPORT_FD) dup2(report_write, REPORT_FD);
        supervise(request, parent, max_fd, out_ring, err_ring);
        _exit(0);
    }
    free(out_ring);
    free(err_ring);
    close(control[0]);
    close(report[1]);
    handle->supervisor_pid = supervisor;
    handle->control_fd = control[1];
    handle->report_fd = report[0];
    handle->leader_pid = 0;
    orch_report first;
    memset(&first, 0, sizeof(first));
    int got = read_report(report[0], &first);
    if (got == 0 && first.kind == ORCH_STARTED) {
        handle->leader_pid = first.pid;
    } else {
        // No command runs: keep the reason for orch_wait as a negative errno.
        int code = (got == 0 && first.kind == ORCH_SPAWN_FAILED && first.value > 0) ? first.value : EIO;
        handle->leader_pid = -code;
    }
    return 0;
}

int orch_wait(orch_spawn_handle *handle, orch_report *report) {
    memset(report, 0, sizeof(*report));
    int result = 0;
    if (handle->leader_pid < 0) {
        report->kind = ORCH_SPAWN_FAILED;
        report->value = -handle->leader_pid;
    } else if (read_report(handle->report_fd, report) != 0) {
        report->kind = ORCH_SIGNALED;
        report->value = SIGKILL;
        report->pid = handle->leader_pid;
        result = -1;
    }
    int status;
    while (waitpid(handle->supervisor_pid, &status, 0) < 0 && errno == EINTR) {}
    close(handle->report_fd);
    close(handle->control_fd);
    handle->report_fd = -1;
    handle->control_fd = -1;
    return result;
}

void orch_terminate(const orch_spawn_handle *handle) {
    if (handle->control_fd < 0) return;
    char byte = 'T';
    (void)write(handle->control_fd, &byte, 1);
}
