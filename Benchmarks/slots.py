#!/usr/bin/env python3
"""(i) of Benchmarks/run.sh: PROCESSES processes of the bench driver's `claim`, SLOTS slots each, work one planned run
through URL (PostgreSQL, or pgbouncer in front of it). While they work, the server's client connections are counted
every quarter second; before and after, the CPU time of the server's processes (the postmaster, its backends, and the
backends that ended) and of a pooler (PGBOUNCER_PID; - for none) is read from /proc. Each attempt runs HOLD_MS
milliseconds (0, at once, by default). Prints one line of key=value figures.

usage: slots.py DRIVER RUN URL PROCESSES SLOTS DIRECT_URL [PGBOUNCER_PID [HOLD_MS]]
"""
import os
import resource
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse

driver, run, url, processes, slots, direct = sys.argv[1:7]
processes, slots = int(processes), int(slots)
pooler = int(sys.argv[7]) if len(sys.argv) > 7 and sys.argv[7] != "-" else None
hold = sys.argv[8] if len(sys.argv) > 8 else "0"
tick = os.sysconf("SC_CLK_TCK")


def psql(sql):
    return subprocess.run(["psql", "-Atq", direct, "-c", sql], check=True, capture_output=True, text=True).stdout.strip()


def cpu(pid, children=True):
    """Seconds of CPU of a process, and of its children that ended (and were waited for)."""
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    used = int(fields[11]) + int(fields[12])
    if children:
        used += int(fields[13]) + int(fields[14])
    return used / tick


def server_cpu(postmaster):
    total = cpu(postmaster)
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parent = int(open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            if parent == postmaster:
                total += cpu(int(entry), children=False)
    return total


# The server's socket lock file starts with the postmaster's pid.
socket_dir = urllib.parse.parse_qs(urllib.parse.urlparse(direct).query)["host"][0]
postmaster = int(open(f"{socket_dir}/.s.PGSQL.5432.lock").readline())
time.sleep(0.2)
server_before = server_cpu(postmaster)
pooler_before = cpu(pooler) if pooler else 0.0

connections = []
done = threading.Event()


def count():
    # One session for the counting, which is not counted.
    session = subprocess.Popen(["psql", "-Atq", direct], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    while not done.is_set():
        session.stdin.write(
            "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid();\n")
        session.stdin.flush()
        connections.append(int(session.stdout.readline()))
        time.sleep(0.25)
    session.stdin.close()
    session.wait()


counter = threading.Thread(target=count)
counter.start()
folder = f"/tmp/slots-{os.getpid()}"
os.makedirs(folder, exist_ok=True)
workers = []
environment = dict(os.environ, ORCHESTRATE_DATABASE_URL=url)
for index in range(processes):
    workers.append(subprocess.Popen(
        [driver, "claim", "--run", run, "--slots", str(slots), "--hold", hold, "--latencies", f"{folder}/latencies-{index}"],
        stdout=subprocess.PIPE, stderr=open(f"{folder}/stderr-{index}", "w"), env=environment, text=True))
drivers_before = resource.getrusage(resource.RUSAGE_CHILDREN)
rows = [worker.communicate()[0].split() for worker in workers]
drivers_after = resource.getrusage(resource.RUSAGE_CHILDREN)
driver_seconds = (drivers_after.ru_utime + drivers_after.ru_stime) - (drivers_before.ru_utime + drivers_before.ru_stime)
failed = sum(worker.returncode != 0 for worker in workers)
done.set()
counter.join()
time.sleep(0.5)  # the backends of the drivers' connections end
server_seconds = server_cpu(postmaster) - server_before
pooler_seconds = (cpu(pooler) - pooler_before) if pooler else 0.0

rows = [row for row in rows if len(row) == 3]
completed = sum(int(row[0]) for row in rows)
elapsed = max(float(row[2]) for row in rows) - min(float(row[1]) for row in rows) if rows else float("nan")
latencies = []
for index in range(processes):
    try:
        latencies += [float(line) for line in open(f"{folder}/latencies-{index}") if line.strip()]
    except OSError:
        pass
latencies.sort()
finished, twice = psql(
    f"SELECT count(*), count(*) - count(DISTINCT scenario_id) FROM attempts WHERE run_id = '{run}' AND state = 'finished'"
).split("|")
errors = ""
if failed:
    errors = open(f"{folder}/stderr-{next(i for i, w in enumerate(workers) if w.returncode != 0)}").read().strip()
    errors = errors.splitlines()[-1][:200] if errors else ""
p = lambda q: latencies[min(int(q * len(latencies)), len(latencies) - 1)] if latencies else float("nan")
print(
    f"rate={completed / elapsed:.0f} completed={completed} finished={finished} twice={twice} failed={failed} "
    f"p50={p(0.5):.1f} p99={p(0.99):.1f} connections={max(connections, default=0)} "
    f"server_cpu_ms={server_seconds * 1000 / max(completed, 1):.3f} pooler_cpu_ms={pooler_seconds * 1000 / max(completed, 1):.3f} "
    f"driver_cpu_ms={driver_seconds * 1000 / max(completed, 1):.3f} "
    f"error={errors!r}")
subprocess.run(["rm", "-rf", folder])
