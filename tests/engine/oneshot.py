"""A one-shot harness for the runner's tests: starts the arm's command itself, measures it, stops it.

    python oneshot.py --output OUT --load C [--runs N] -- COMMAND...

COMMAND is the arm's launch (the engine); it gets a free port through ENGINE_PORT. --report adds
this process's own environment size and argument lengths to the output (bench.itself).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

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
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    engine = subprocess.Popen(command, env={**os.environ, "ENGINE_PORT": str(port)})
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(500):
            if engine.poll() is not None:
                sys.exit(f"oneshot: the engine exited with status {engine.returncode}")
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=1) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(0.01)
        results = [measure(url, args.load, 6, 10) for _ in range(args.runs)]
    finally:
        engine.terminate()
        engine.wait()
    with open(args.output, "w") as fh:
        if args.garbage:
            fh.write("this is no benchmark output\n")
        else:
            extra = itself() if args.report else {}
            fh.write("".join(json.dumps({**r, **extra}) + "\n" for r in results))


if __name__ == "__main__":
    main()
