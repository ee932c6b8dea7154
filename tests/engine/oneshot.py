"""A one-shot harness for the runner's tests: starts the arm's command itself, measures it, stops it.

    python oneshot.py --output OUT --load C [--runs N] -- COMMAND...

COMMAND is the arm's launch (the engine); ENGINE_PORT=0 makes it bind a free port, which it
writes to ENGINE_PORT_FILE before it answers: no port is chosen here and released for it to take.
--report adds this process's own environment size and argument lengths to the output (bench.itself).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from bench import itself, measure


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--output", required=True)
    ap.add_argument("--load", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--garbage", action="store_true", help="write what no importer reads")
    ap.add_argument("--arm", default="")
    ap.add_argument("--report", action="store_true", help="add this process's environment and argv sizes")
    ap.add_argument("--runs", type=int, default=1, help="measured runs in this one launch, one JSON line each")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    with tempfile.TemporaryDirectory() as folder:
        port_file = Path(folder) / "port"
        engine = subprocess.Popen(command, env={**os.environ, "ENGINE_PORT": "0", "ENGINE_PORT_FILE": str(port_file)})
        try:
            results = [_measure(engine, port_file, args.load) for _ in range(args.runs)]
        finally:
            engine.terminate()
            engine.wait()
    with open(args.output, "w") as fh:
        if args.garbage:
            fh.write("this is no benchmark output\n")
        else:
            extra = itself() if args.report else {}
            fh.write("".join(json.dumps({**r, **extra}) + "\n" for r in results))


def _measure(engine: subprocess.Popen[bytes], port_file: Path, load: int) -> dict[str, object]:
    deadline = time.monotonic() + 60
    while not port_file.exists():
        if engine.poll() is not None:
            sys.exit(f"oneshot: the engine exited with status {engine.returncode}")
        if time.monotonic() > deadline:
            sys.exit("oneshot: the engine wrote no port within 60 s")
        time.sleep(0.01)
    url = f"http://127.0.0.1:{int(port_file.read_text())}"
    with urllib.request.urlopen(f"{url}/health", timeout=10) as r:
        if r.status != 200:
            sys.exit(f"oneshot: the engine answered /health with {r.status}")
    return measure(url, load, 6, 10)


if __name__ == "__main__":
    main()
