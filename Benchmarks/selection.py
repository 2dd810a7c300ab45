#!/usr/bin/env python3
"""Measures `orchestrate run --changed-since` on a real pytest project: toolz's releases from PyPI, replayed as
commits of one git repository (real upstream changes), each followed by seeded mutants (a bug put into a source file
the release changed). For each release and mutant, a selected run (`--changed-since` the commit before, footprints
from the full run there) and a full run, one after the other: tests selected, time, and the failures the full run
found that the selected run did not (selection misses).

Then the same on the clinic example (Examples/clinic, replayed from its cassettes): a feature file, a cassette and a
README changed, and two bugs (a feature file's expectation, a recorded answer).

Usage: Benchmarks/selection.py ORCHESTRATE WORK_DIR [MUTANTS_PER_RELEASE]
(clinic-scenarios, the clinic's steps, sits beside ORCHESTRATE in the build folder.)
Prints one line per step and a summary; the last line is machine-readable (JSON).
"""
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tarfile
import time

PROJECT = "toolz"
VERSIONS = ["0.11.0", "0.11.1", "0.11.2", "0.12.0", "0.12.1", "1.0.0"]
# A mutation: one operator on one line, as a mutation-testing tool makes them.
OPERATORS = [(" == ", " != "), (" != ", " == "), (" < ", " >= "), (" > ", " <= "), (" + ", " - "), (" - ", " + "),
             (" and ", " or "), (" or ", " and "), ("True", "False"), ("False", "True"), ("return ", "return None and ")]

CONFIG = """\
workers: 8
quarantine: { threshold: off }
suite:
  list: "python3 -m pytest --collect-only -q -p no:cacheprovider toolz/tests | grep ::"
  command: >-
    COVERAGE_FILE=$TMPDIR/.coverage python3 -m coverage run -m pytest -q -p no:cacheprovider
    -o junit_family=xunit2 --junitxml=$ORCHESTRATE_ARTIFACTS_DIR/junit.xml {ids}; status=$?;
    COVERAGE_FILE=$TMPDIR/.coverage python3 -m coverage json -q --show-contexts
    -o $ORCHESTRATE_ARTIFACTS_DIR/coverage.json; exit $status
  results: junit
  env: { PYTHONDONTWRITEBYTECODE: "1" }
selection:
  ignore: ["*.md", "*.rst", "*.txt", "*.cfg", "PKG-INFO", "*.egg-info/"]
"""


def sh(*args, cwd, check=True):
    return subprocess.run(args, cwd=cwd, check=check, capture_output=True, text=True)


def git(repo, *args):
    return sh("git", "-c", "user.email=bench@example.test", "-c", "user.name=bench", *args, cwd=repo)


def release(work, version):
    """The release's tree, unpacked from its sdist (downloaded once)."""
    archive = os.path.join(work, "sdists", f"{PROJECT}-{version}.tar.gz")
    if not os.path.exists(archive):
        sh(sys.executable, "-m", "pip", "download", "-q", "--no-binary", ":all:", "--no-deps",
           f"{PROJECT}=={version}", "-d", os.path.dirname(archive), cwd=work)
    target = os.path.join(work, "trees", version)
    if not os.path.exists(target):
        with tarfile.open(archive) as tar:
            tar.extractall(os.path.join(work, "trees"), filter="data")
        os.rename(os.path.join(work, "trees", f"{PROJECT}-{version}"), target)
    return target


def replace_tree(repo, tree):
    """The repository's files become the release's (its history, config and ignores stay)."""
    keep = {".git", ".orchestrate", "orchestrate.yml", ".coveragerc", ".gitignore"}
    for name in os.listdir(repo):
        if name not in keep:
            path = os.path.join(repo, name)
            shutil.rmtree(path) if os.path.isdir(path) and not os.path.islink(path) else os.remove(path)
    for name in os.listdir(tree):
        source = os.path.join(tree, name)
        (shutil.copytree if os.path.isdir(source) else shutil.copy2)(source, os.path.join(repo, name))


# A selected test's reason, as --verbose logs it; those that are history's, not the footprint's.
SELECTED = re.compile(r" info orchestrate : reason=(.*) test=(.*) selected$", re.M)
HISTORY = ("failed or flaked", "new test", "no footprint", "sampled")


def run(orchestrate, repo, *args):
    """One orchestrate run: (wall seconds, scenarios run, ids of the tests that failed, the tests selected for a
    footprint's reason, not history's)."""
    junit = os.path.join(repo, ".orchestrate", "bench-junit.xml")
    start = time.monotonic()
    verbose = ["--verbose"] if "--changed-since" in args else []
    done = subprocess.run([orchestrate, "run", "--progress", "none", "--junit", junit, *verbose, *args], cwd=repo,
                          capture_output=True, text=True)
    elapsed = time.monotonic() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"orchestrate run {' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    text = open(junit).read()
    failed = set(re.findall(r'<property name="orchestrate.scenario_id" value="([^"]*)"/>\s*'
                            r'<property name="orchestrate.result" value="failed"/>', text))
    ran = len(re.findall(r'<property name="orchestrate.result" value="(?:passed|failed|flaky)"/>', text))
    by_footprint = {test for reason, test in SELECTED.findall(done.stderr) if not reason.startswith(HISTORY)}
    return elapsed, ran, failed, by_footprint


def measure(orchestrate, repo, kind, base, baseline):
    """A run selected by what changed since `base`, then a full run: the step (kind, selected, total, selected seconds,
    full seconds, new failures in the full run, those the selected run caught, and those it caught for a footprint), and
    the full run's failures; new ones are those not in `baseline`."""
    selected_s, selected, selected_failed, footprinted = run(orchestrate, repo, "--changed-since", base)
    full_s, total, failed, _ = run(orchestrate, repo)
    new = failed - baseline
    caught = new & selected_failed
    return (kind, selected, total, selected_s, full_s, new, caught, caught & footprinted), failed


def said(step):
    """A step's figures as the lines below say them."""
    _, selected, total, selected_s, full_s, new, caught, _ = step
    return (f"selected {selected} of {total} ({selected_s:.1f}s against {full_s:.1f}s); "
            f"new failures: full {len(new)}, caught {len(caught)}")


def mutate(repo, files, generator):
    """Puts one seeded bug into one of `files` (a line of a function's body); returns where, or None."""
    candidates = []
    for name in files:
        lines = open(os.path.join(repo, name)).read().split("\n")
        for number, line in enumerate(lines):
            stripped = line.strip()
            if not line.startswith(" ") or stripped.startswith(("def ", "class ", "#", '"', "'", "@", ">>>")):
                continue
            for old, new in OPERATORS:
                if old in line:
                    candidates.append((name, number, old, new))
    if not candidates:
        return None
    name, number, old, new = generator.choice(candidates)
    path = os.path.join(repo, name)
    lines = open(path).read().split("\n")
    lines[number] = lines[number].replace(old, new, 1)
    open(path, "w").write("\n".join(lines))
    return f"{name}:{number + 1} {old.strip()}→{new.strip()}"


def clinic(orchestrate, work, steps):
    """The clinic example as a repository of its own: each change committed, then a selected run and a full run."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    repo = os.path.join(work, "clinic")
    os.makedirs(repo)
    for name in ["Features", "Recordings"]:
        shutil.copytree(os.path.join(root, "Examples", "clinic", name), os.path.join(repo, name))
    config = open(os.path.join(root, "Examples", "clinic", "orchestrate.yml")).read()
    steps_binary = os.path.join(os.path.dirname(orchestrate), "clinic-scenarios")
    config = config.replace('"../../.build/debug/clinic-scenarios"', json.dumps(steps_binary))
    open(os.path.join(repo, "orchestrate.yml"), "w").write(config + 'selection:\n  ignore: ["*.md"]\n')
    open(os.path.join(repo, ".gitignore"), "w").write(".orchestrate/\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "clinic")
    try:
        _, total, baseline, _ = run(orchestrate, repo)
        print(f"   clinic: {total} scenarios, full run records the footprints ({len(baseline)} failing)")

        def edited(path, old, new):
            text = open(os.path.join(repo, path)).read()
            assert old in text, (path, old)
            open(os.path.join(repo, path), "w").write(text.replace(old, new, 1))

        home = "Recordings/Features/home/Headlines_survive_a_hiccup_of_the_backend.har"
        changes = [
            ("a comment in chat.feature", lambda: edited("Features/chat.feature", "Feature:", "# reviewed\nFeature:"), True),
            ("a cassette re-recorded", lambda: edited(
                "Recordings/Features/registration/A_new_patient_registers.har", '"version" : "1"', '"version" : "1" '),
             True),
            ("a README", lambda: open(os.path.join(repo, "README.md"), "w").write("clinic\n"), True),
            ("bug: an expectation in appointments.feature", lambda: edited(
                "Features/appointments.feature", "tomorrow at 09:00\n", "tomorrow at 10:00\n"), False),
            ("bug: a recorded answer with one headline fewer", lambda: edited(
                home, ',\\"Dr. Okafor joins the team\\"', ""), False),
        ]
        for what, change, commit in changes:
            change()
            if commit:
                git(repo, "add", "-A")
                git(repo, "commit", "-qm", what)
            step, _ = measure(orchestrate, repo, "clinic", "HEAD~1" if commit else "HEAD", baseline)
            if not commit:
                git(repo, "checkout", "-q", "--", ".")
            steps.append(step)
            print(f"     {what}: {said(step)}")
    finally:
        subprocess.run([orchestrate, "db", "stop"], cwd=repo, capture_output=True)


def main():
    orchestrate, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    mutants = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    generator = random.Random(20261127)
    repo = os.path.join(work, "repo")
    os.makedirs(os.path.join(work, "sdists"), exist_ok=True)
    os.makedirs(repo, exist_ok=True)
    git(repo, "init", "-q")
    open(os.path.join(repo, "orchestrate.yml"), "w").write(CONFIG)
    open(os.path.join(repo, ".coveragerc"), "w").write("[run]\ndynamic_context = test_function\n")
    open(os.path.join(repo, ".gitignore"), "w").write(".orchestrate/\n__pycache__/\n")
    replace_tree(repo, release(work, VERSIONS[0]))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", VERSIONS[0])
    _, total, baseline, _ = run(orchestrate, repo)
    print(f"   {PROJECT} {VERSIONS[0]}: {total} tests, full run records the footprints ({len(baseline)} failing)")
    steps = []  # (kind, selected, total, selected seconds, full seconds, failed in full, caught by selected)
    for version in VERSIONS[1:]:
        replace_tree(repo, release(work, version))
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", version)
        changed = sh("git", "diff", "--name-only", "HEAD~1", "HEAD", cwd=repo).stdout.split()
        sources = [f for f in changed if f.endswith(".py") and "/tests/" not in f and not f.endswith("_version.py")
                   and os.path.exists(os.path.join(repo, f))]
        # Failures the release's own full run has are its baseline: only new ones are a change's (a test that fails
        # on this Python at every release is not one a selection could miss or catch).
        step, baseline = measure(orchestrate, repo, "release", "HEAD~1", baseline)
        steps.append(step)
        print(f"   {version}: {len(changed)} files changed; {said(step)}")
        for _ in range(mutants):
            where = mutate(repo, sources or [f for f in sh("git", "ls-files", "toolz", cwd=repo).stdout.split()
                                             if f.endswith(".py") and "/tests/" not in f], generator)
            if where is None:
                continue
            step, _ = measure(orchestrate, repo, "mutant", "HEAD", baseline)
            git(repo, "checkout", "-q", "--", ".")
            steps.append(step)
            print(f"     mutant {where}: {said(step)}")
    subprocess.run([orchestrate, "db", "stop"], cwd=repo, capture_output=True)
    clinic(orchestrate, work, steps)
    failing = [s for s in steps if s[5]]
    caught_mutants = sum(1 for s in failing if s[6])
    failures = sum(len(s[5]) for s in steps)
    caught = sum(len(s[6]) for s in steps)
    # Caught for a footprint's reason: a test that failed in the run before is selected as one that failed lately
    # whatever its footprint says.
    by_footprint = sum(len(s[7]) for s in steps)
    selected_tests = sum(s[1] for s in steps)
    all_tests = sum(s[2] for s in steps)
    selected_time = sum(s[3] for s in steps)
    full_time = sum(s[4] for s in steps)
    print(f"   {len(steps)} changes ({len(VERSIONS) - 1} toolz releases, "
          f"{sum(1 for s in steps if s[0] == 'mutant')} toolz mutants, {sum(1 for s in steps if s[0] == 'clinic')} "
          f"clinic changes); {len(failing)} made tests fail in the full run")
    print(f"   failing tests caught by the selected run: {caught} of {failures} ({by_footprint} for their footprint, the "
          f"rest as tests that failed lately); failing changes caught: {caught_mutants} of {len(failing)}")
    print(f"   tests run: {selected_tests} of {all_tests} ({100 * selected_tests / max(all_tests, 1):.0f}%); "
          f"time: {selected_time:.1f}s against {full_time:.1f}s ({100 * (1 - selected_time / full_time):.0f}% saved)")
    print(json.dumps({"changes": len(steps), "failing_changes": len(failing), "caught_changes": caught_mutants,
                      "failures": failures, "caught": caught, "caught_by_footprint": by_footprint, "tests_run": selected_tests, "tests_all": all_tests,
                      "selected_seconds": round(selected_time, 1), "full_seconds": round(full_time, 1)}))


if __name__ == "__main__":
    try:
        main()
    finally:
        # The embedded cluster the runs started, stopped however the measurement ended.
        repo = os.path.join(os.path.abspath(sys.argv[2]), "repo")
        if os.path.isdir(os.path.join(repo, ".orchestrate")):
            subprocess.run([os.path.abspath(sys.argv[1]), "db", "stop"], cwd=repo, capture_output=True)
