"""A real benchmark client for the runner's tests: requests to the engine, a vLLM `bench serve` JSON out.

--hang sleeps for ever (a hung benchmark); --fail exits 2; --garbage writes what no importer reads;
--daemon PIDFILE leaves a process of its own session behind (as `setsid cmd &` does), its pid
written to PIDFILE. The engine's URL is --url, or http://127.0.0.1:PORT with PORT read from
--port-file (where the engine wrote the port it bound).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor


def measure(url: str, concurrency: int, requests: int, tokens: int) -> dict[str, object]:
    latencies: list[float] = []

    def one(_i: int) -> None:
        t0 = time.perf_counter()
        with urllib.request.urlopen(f"{url}/generate?tokens={tokens}", timeout=30) as resp:
            resp.read()
        latencies.append((time.perf_counter() - t0) * 1000)

    t0 = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(one, range(requests)))
    duration = time.perf_counter() - t0
    return {
        "date": dt.datetime.now().strftime("%Y%m%d-%H%M%S"),
        "endpoint_type": "openai",
        "backend": "openai",
        "label": "test-engine",
        "num_prompts": requests,
        "max_concurrency": concurrency,
        "request_rate": "inf",
        "completed": requests,
        "duration": duration,
        "request_throughput": requests / duration,
        "output_throughput": requests * tokens / duration,
        "total_token_throughput": requests * tokens / duration,
        "mean_e2el_ms": sum(latencies) / len(latencies),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--url")
    ap.add_argument("--port-file")
    ap.add_argument("--daemon", default="", help="PIDFILE: leave a process of its own session running")
    ap.add_argument("--output", required=True)
    ap.add_argument("--concurrency", type=int, default=2)
    ap.add_argument("--requests", type=int, default=6)
    ap.add_argument("--tokens", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--hang", action="store_true")
    ap.add_argument("--fail", action="store_true")
    ap.add_argument("--garbage", action="store_true")
    ap.add_argument("--fail-in", default="", help="BLOCK:ARM: fail only in that block, for that arm")
    ap.add_argument("--block", default="")
    ap.add_argument("--arm", default="")
    args = ap.parse_args()
    if args.port_file:
        with open(args.port_file) as fh:
            args.url = f"http://127.0.0.1:{int(fh.read())}"
    if args.daemon:
        left = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(3600)"],
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        with open(args.daemon, "a") as fh:
            fh.write(f"{left.pid}\n")
    if args.hang:
        print("bench: hanging", flush=True)
        time.sleep(3600)
    if args.fail or (args.fail_in and args.fail_in == f"{args.block}:{args.arm}"):
        print("bench: failing on purpose", flush=True)
        sys.exit(2)
    with open(args.output, "w") as fh:
        if args.garbage:
            fh.write("this is no benchmark output\n")
            return
        json.dump(measure(args.url, args.concurrency, args.requests, args.tokens), fh)
    print(f"bench: wrote {args.output}", flush=True)


if __name__ == "__main__":
    main()
