#!/usr/bin/env python3
"""A stand-in for xcodebuild and xcrun (simctl, xcresulttool), for orchestrate's tests on Linux, where Xcode cannot run.

It answers as Xcode does, in the shapes Xcode publishes: build-for-testing writes an .xctestrun; -enumerate-tests writes
the JSON listing; test-without-building runs the -only-testing tests it knows on a booted simulator (an id it does not
know runs nothing, exit 0, as xcodebuild does) and writes a result bundle; xcresulttool reads it as Xcode 16 does
(STANDIN_XCODE=16: duration strings in the machine's locale, "0,012s") or Xcode 26 does (durationInSeconds,
nodeIdentifierURL, "First Run"/"Retry N" repetitions). simctl clones, boots, erases and deletes simulators in a state file.
Every call is logged (STANDIN_LOG) with the TEST_RUNNER_ variables it saw.
"""
import fcntl, json, os, sys, time, uuid

STATE = os.environ["STANDIN_STATE"]
XCODE = os.environ.get("STANDIN_XCODE", "16")

# Target/Class/method, outcome, seconds, failure ("File.swift:line: message").
TESTS = [
    ("AppUITests/LoginTests/testLogin", "pass", 0.012, None),
    ("AppUITests/LoginTests/testLogout", "fail", 0.030, "LoginTests.swift:42: XCTAssertTrue failed - still logged in"),
    ("AppUITests/CartTests/testCheckout", "flaky", 1.5, "CartTests.swift:17: XCTAssertEqual failed: (\"1\") is not equal to (\"2\")"),
    ("AppUITests/CartTests/testSlow", "pass", 61.25, None),
    ("AppTests/PriceTests/discount()", "pass", 0.004, None),
]


def load():
    try:
        return json.load(open(STATE))
    except FileNotFoundError:
        return {"simulators": {}, "erased": {}}


def save(state):
    # Whole or not at all: xcodebuild reads the state while another slot's simctl writes it.
    json.dump(state, open(STATE + ".tmp", "w"))
    os.replace(STATE + ".tmp", STATE)


def log(entry):
    with open(os.environ["STANDIN_LOG"], "a") as f:
        f.write(json.dumps(entry) + "\n")


def option(args, name):
    return args[args.index(name) + 1] if name in args else None


def xcodebuild(args):
    if "build-for-testing" in args:
        if os.environ.get("STANDIN_BUILD_FAILS"):
            print("/src/App/LoginView.swift:12:5: error: cannot find 'session' in scope")
            print("** TEST BUILD FAILED **")
            return 65
        products = os.path.join(option(args, "-derivedDataPath"), "Build", "Products")
        os.makedirs(products, exist_ok=True)
        open(os.path.join(products, "App_App_iphonesimulator18.0-arm64.xctestrun"), "w").write("<plist/>")
        print("** TEST BUILD SUCCEEDED **")
        return 0
    if "-enumerate-tests" in args:
        enabled = [t[0] for t in TESTS]
        if os.environ.get("STANDIN_GHOST"):
            # Listed, but the test plan leaves it out: asked for, it runs nothing.
            enabled.append("AppUITests/GhostTests/testGhost")
        listing = {"values": [{"testPlan": "App", "enabledTests": [{"identifier": i} for i in enabled],
                               "disabledTests": [{"identifier": "AppUITests/LoginTests/testDisabled"}]}], "errors": []}
        json.dump(listing, open(option(args, "-test-enumeration-output-path"), "w"))
        return 0
    if "test-without-building" in args:
        destination = option(args, "-destination") or ""
        udid = destination[3:] if destination.startswith("id=") else ""
        if load()["simulators"].get(udid, {}).get("state") != "Booted":
            print(f"xcodebuild: error: Unable to find a destination matching {destination}", file=sys.stderr)
            return 70
        asked = [a[len("-only-testing:"):] for a in args if a.startswith("-only-testing:")]
        time.sleep(float(os.environ.get("STANDIN_SLEEP", "0")))
        attempt = os.environ.get("TEST_RUNNER_ORCHESTRATE_ATTEMPT", "")
        ran = []
        for test_id, outcome, seconds, failure in TESTS:
            if test_id not in asked:
                continue
            # testCheckout fails on its first attempt; under Xcode 26 the runner's own retry passes it within the run.
            failed = outcome == "fail" or (outcome == "flaky" and attempt == "1")
            ran.append({"id": test_id, "failed": failed, "seconds": seconds, "failure": failure, "flaky": outcome == "flaky"})
        bundle = option(args, "-resultBundlePath")
        os.makedirs(bundle, exist_ok=True)
        json.dump(ran, open(os.path.join(bundle, "standin.json"), "w"))
        log({"tool": "xcodebuild", "asked": asked, "simulator": udid,
             "mock": os.environ.get("TEST_RUNNER_ORCHESTRATE_MOCK_URL"), "attempt": attempt})
        for test in ran:
            print(f"Test Case '-[{test['id']}]' {'failed' if test['failed'] else 'passed'} ({test['seconds']} seconds).")
        return 65 if any(t["failed"] and not (XCODE == "26" and t["flaky"]) for t in ran) else 0
    print(f"xcodebuild stand-in: unknown call {args}", file=sys.stderr)
    return 64


def duration16(seconds):
    text = f"{seconds:.3f}".rstrip("0").rstrip(".").replace(".", ",")
    if seconds >= 60:
        return f"{int(seconds // 60)}m {seconds % 60:g}s".replace(".", ",")
    return text + "s"


def case_node(test):
    target, cls, method = test["id"].split("/")
    name = method if method.endswith(")") else method + "()"
    node = {"name": name, "nodeType": "Test Case", "nodeIdentifier": f"{cls}/{name}"}
    failure = {"name": test["failure"], "nodeType": "Failure Message", "result": "Failed"} if test["failure"] else None
    if XCODE == "26":
        node["durationInSeconds"] = test["seconds"]
        node["nodeIdentifierURL"] = f"test://com.apple.xcode/App/{target}/{cls}/{method}"
        if test["flaky"] and test["failed"]:
            # The runner ran it again itself: the first run failed, the retry passed.
            node["result"] = "Passed"
            node["children"] = [
                {"name": "First Run", "nodeType": "Repetition", "result": "Failed", "children": [failure]},
                {"name": "Retry 1", "nodeType": "Repetition", "result": "Passed"},
            ]
            return target, cls, node
    else:
        node["duration"] = duration16(test["seconds"])
    node["result"] = "Failed" if test["failed"] else "Passed"
    if test["failed"]:
        node["children"] = [failure]
    return target, cls, node


def xcresulttool(args):
    bundle = option(args, "--path")
    ran = json.load(open(os.path.join(bundle, "standin.json")))
    if args[:3] == ["get", "test-results", "tests"]:
        targets = {}
        for test in ran:
            target, cls, node = case_node(test)
            targets.setdefault(target, {}).setdefault(cls, []).append(node)
        plan = {"name": "App", "nodeType": "Test Plan", "result": "Failed", "children": [
            {"name": target, "nodeType": "UI test bundle" if target.endswith("UITests") else "Unit test bundle", "result": "Failed",
             "children": [{"name": cls, "nodeType": "Test Suite", "result": "Failed", "children": cases} for cls, cases in classes.items()]}
            for target, classes in targets.items()]}
        print(json.dumps({"devices": [{"deviceName": "iPhone 16", "platform": "iOS Simulator"}], "testNodes": [plan],
                          "testPlanConfigurations": [{"configurationId": "1", "configurationName": "Test Scheme Action"}]}))
        return 0
    if args[:2] == ["export", "attachments"]:
        out = option(args, "--output-path")
        os.makedirs(out, exist_ok=True)
        manifest = []
        for test in ran:
            if test["failed"]:
                name = test["id"].replace("/", "_") + ".png"
                open(os.path.join(out, name), "wb").write(b"\x89PNG\r\n\x1a\n" + b"\0" * 64)
                manifest.append({"testIdentifier": test["id"], "attachments": [{"exportedFileName": name}]})
        json.dump(manifest, open(os.path.join(out, "manifest.json"), "w"))
        return 0
    return 64


def simctl(args):
    with open(STATE + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return locked_simctl(args)


def locked_simctl(args):
    state = load()
    simulators = state["simulators"]
    command = args[0]
    if command == "clone":
        udid = str(uuid.uuid4()).upper()
        simulators[udid] = {"name": args[2], "device": args[1], "state": "Shutdown"}
        print(udid)
    elif args[1] not in simulators:
        print(f"Invalid device: {args[1]}", file=sys.stderr)
        return 148
    elif command == "boot":
        simulators[args[1]]["state"] = "Booted"
    elif command == "bootstatus":
        if simulators[args[1]]["state"] != "Booted":
            return 1
    elif command == "shutdown":
        simulators[args[1]]["state"] = "Shutdown"
    elif command == "erase":
        if simulators[args[1]]["state"] != "Shutdown":
            print("Unable to erase contents and settings in current state: Booted", file=sys.stderr)
            return 149
        state["erased"][args[1]] = state["erased"].get(args[1], 0) + 1
    elif command == "delete":
        del simulators[args[1]]
    else:
        return 64
    save(state)
    log({"tool": "simctl", "args": args})
    return 0


def main():
    tool = os.path.basename(sys.argv[0])
    args = sys.argv[1:]
    if tool == "xcodebuild":
        return xcodebuild(args)
    if args and args[0] == "simctl":
        return simctl(args[1:])
    if args and args[0] == "xcresulttool":
        return xcresulttool(args[1:])
    return 64


sys.exit(main())
