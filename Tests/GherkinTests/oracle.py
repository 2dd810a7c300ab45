"""The official Cucumber parser (PyPI gherkin-official) as the oracle of the Gherkin conformance tests.

    python3 oracle.py VERSION FILE...    one JSON line per file: {"path": FILE, "envelopes": [...]}, the pickles or
                                         parse errors the official parser makes of it
    python3 oracle.py VERSION --languages  the path of the gherkin-languages.json the installed parser carries

Exits 3 when the installed gherkin-official is not VERSION (the tests pin one).
"""
import json
import os
import sys
from importlib.metadata import PackageNotFoundError, version


def main(arguments):
    pinned, rest = arguments[0], arguments[1:]
    try:
        installed = version("gherkin-official")
    except PackageNotFoundError:
        installed = None
    if installed != pinned:
        print(f"gherkin-official {pinned} is needed, found {installed or 'none'}", file=sys.stderr)
        return 3
    import gherkin
    from gherkin.stream.gherkin_events import GherkinEvents

    if rest == ["--languages"]:
        print(os.path.join(os.path.dirname(gherkin.__file__), "gherkin-languages.json"))
        return 0
    options = GherkinEvents.Options(print_source=False, print_ast=False, print_pickles=True)
    for path in rest:
        with open(path, encoding="utf-8", newline="") as file:
            data = file.read()
        source = {"source": {"uri": path, "data": data, "mediaType": "text/x.cucumber.gherkin+plain"}}
        envelopes = list(GherkinEvents(options).enum(source))
        print(json.dumps({"path": path, "envelopes": envelopes}, sort_keys=True, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
