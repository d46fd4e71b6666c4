"""Run acpwire's check, stats and replay in this process on every trace named on the command
line, with every format, and print one JSON line per run: the arguments, exit status, the
traceback if one escaped, and the bytes written to standard output and error (base64)."""

from __future__ import annotations

import base64
import io
import json
import sys
import traceback

from acpwire.cli.main import main

COMMANDS = [
    ["check", "--json"],
    ["check"],
    ["stats", "--json"],
    ["stats"],
    *(["replay", "--format", fmt] for fmt in ("text", "ansi", "markdown", "html", "json")),
]


def run(arguments: list[str]) -> dict[str, object]:
    out, err = io.BytesIO(), io.BytesIO()
    saved = sys.stdout, sys.stderr
    sys.stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    sys.stderr = io.TextIOWrapper(err, encoding="utf-8", write_through=True)
    crash = None
    try:
        status = main(arguments)
    except BaseException:  # what the test is looking for
        status, crash = None, traceback.format_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        written = out.getvalue(), err.getvalue()
        sys.stdout, sys.stderr = saved
    return {
        "args": arguments,
        "status": status,
        "crash": crash,
        "stdout": base64.b64encode(written[0]).decode(),
        "stderr": base64.b64encode(written[1]).decode(),
    }


if __name__ == "__main__":
    for path in sys.argv[1:]:
        for command in COMMANDS:
            print(json.dumps(run([*command[:1], path, *command[1:]])), flush=True)
        print(json.dumps(run(["replay", path, "--session", "\x1b]0;x\x07"])), flush=True)
