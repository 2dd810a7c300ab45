#!/usr/bin/env python3
"""Runs the test suite and watches it through Swift Testing's event stream, so that it ends with a clear failure
rather than a hang.

    scripts/test-watchdog.py [--stuck-after SECONDS] [--deadline SECONDS] -- swift test --skip-build …

A run in which no test has ended for --stuck-after seconds (more than any of the suite's time limits: its running
tests wait on something that never comes) is stuck. Swift Testing announces a test when it is scheduled, before it
waits for one of the --experimental-maximum-parallelization-width places, so the watchdog watches the suite's progress
rather than each test's age. It then names the tests started and not ended, oldest first (the first of them are the ones
running), asks the test processes for their threads' backtraces (SIGQUIT), ends the whole process group and exits 1.
The same happens when the whole run passes --deadline. A run whose process exits 0 while a test it started never ended, or that
ran no test at all, fails too: no green without evidence.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time


def descendants(root):
    """The ids of every process below `root`, from /proc."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(entry))
        except (OSError, IndexError, ValueError):
            continue
    found, pending = [], [root]
    while pending:
        for child in children.get(pending.pop(), []):
            found.append(child)
            pending.append(child)
    return found


def command_line(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as line:
            return line.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


class Stream:
    """Swift Testing's event stream (JSON lines, version 0), read as it grows."""

    def __init__(self, path):
        self.path = path
        self.offset = 0
        self.partial = b""
        self.names = {}  # test id → display name
        self.suites = set()  # ids of suites: they run as long as their tests, which are watched themselves
        self.running = {}  # test id → when it started, as the stream's clock says
        self.began = {}  # test id → when it started
        self.ended = {}  # test id → seconds it ran
        self.started = 0
        self.progress = time.time()  # when a test last ended (or the run began)

    def read(self):
        try:
            with open(self.path, "rb") as stream:
                stream.seek(self.offset)
                data = stream.read()
        except OSError:
            return
        self.offset += len(data)
        lines = (self.partial + data).split(b"\n")
        self.partial = lines.pop()
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            payload = record.get("payload") or {}
            # The stream's own clock: when it happened, not when it was read.
            now = (payload.get("instant") or {}).get("since1970") or time.time()
            if record.get("kind") == "test":
                name = payload.get("displayName") or payload.get("name") or payload.get("id", "")
                self.names[payload.get("id", "")] = name
                if payload.get("kind") == "suite":
                    self.suites.add(payload.get("id", ""))
                continue
            kind, test = payload.get("kind"), payload.get("testID")
            if not test or test in self.suites:
                continue
            if kind == "testStarted":
                self.running[test] = self.began[test] = now
                self.started += 1
            elif kind == "testCaseEnded":
                # A parameterized test's case that ends is progress too.
                self.progress = max(self.progress, now)
            elif kind in ("testEnded", "testSkipped"):
                self.running.pop(test, None)
                self.ended[test] = now - self.began.pop(test, now)
                self.progress = max(self.progress, now)

    def name(self, test):
        # A test's id ends with its source location; its display name says what it checks.
        return f"{self.names.get(test, test)}  ({test})"

    def unended(self):
        """The tests started and not ended, oldest first, with their ages."""
        now = time.time()
        return sorted(((now - began, test) for test, began in self.running.items()), reverse=True)

    def stalled(self, after):
        """Whether tests are under way and none has ended for `after` seconds."""
        return bool(self.running) and time.time() - self.progress > after


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stuck-after", type=float, default=480, help="seconds without a test ending (default 480)")
    parser.add_argument("--deadline", type=float, default=3600, help="seconds the whole run may take (default 3600)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the test command, after --")
    options = parser.parse_args()
    command = options.command[1:] if options.command[:1] == ["--"] else options.command
    if not command:
        parser.error("no test command given (after --)")

    folder = tempfile.mkdtemp(prefix="orchestrate-watchdog-")
    path = os.path.join(folder, "events.jsonl")
    environment = dict(os.environ)
    # Backtraces of every thread when the watchdog asks (SIGQUIT), plain text for a CI log.
    environment.setdefault("SWIFT_BACKTRACE", "enable=yes,threads=all,interactive=no,color=no")
    process = subprocess.Popen(
        command + ["--event-stream-output-path", path, "--event-stream-version", "0"], env=environment, start_new_session=True
    )
    stream = Stream(path)
    began = time.monotonic()

    def give_up(reason, tests):
        print(f"\nwatchdog: {reason}", file=sys.stderr, flush=True)
        for seconds, test in tests[:40]:
            print(f"watchdog:   started {seconds:.0f} s ago, not ended: {stream.name(test)}", file=sys.stderr, flush=True)
        if len(tests) > 40:
            print(f"watchdog:   … and {len(tests) - 40} more", file=sys.stderr, flush=True)
        targets = [pid for pid in descendants(process.pid) if ".xctest" in command_line(pid)]
        for pid in targets:
            try:
                os.kill(pid, signal.SIGQUIT)
            except OSError:
                pass
        if targets:
            print(f"watchdog: asked the test process{'es' if len(targets) > 1 else ''} {targets} for backtraces (SIGQUIT)", file=sys.stderr, flush=True)
            time.sleep(20)
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except OSError:
            pass
        process.wait()
        sys.exit(1)

    # A CI that cancels the job sends SIGTERM: the tests go with the watchdog, and it says which were running.
    signal.signal(signal.SIGTERM, lambda *_: give_up("terminated", stream.unended()))
    try:
        while process.poll() is None:
            time.sleep(2)
            stream.read()
            if stream.stalled(options.stuck_after):
                give_up(f"no test has ended for {options.stuck_after:.0f} s: the running ones wait on something that never comes", stream.unended())
            if time.monotonic() - began > options.deadline:
                give_up(f"the test run passed its deadline of {options.deadline:.0f} s", stream.unended())
    except KeyboardInterrupt:
        give_up("interrupted", stream.unended())
    stream.read()
    status = process.returncode
    if status == 0 and stream.running:
        print("\nwatchdog: the test process exited 0, but these tests never ended:", file=sys.stderr)
        for test in stream.running:
            print(f"watchdog:   {stream.name(test)}", file=sys.stderr)
        status = 1
    if status == 0 and stream.started == 0:
        print("\nwatchdog: the test process exited 0 without running a test", file=sys.stderr)
        status = 1
    slowest = sorted(((seconds, test) for test, seconds in stream.ended.items()), reverse=True)[:5]
    if slowest:
        print("watchdog: slowest tests: " + "; ".join(f"{seconds:.0f} s {stream.names.get(test, test)}" for seconds, test in slowest), file=sys.stderr)
    sys.exit(status if status >= 0 else 128 - status)


if __name__ == "__main__":
    main()
