"""A real benchmark client for the runner's tests: requests to the engine, a vLLM `bench serve` JSON out.

--hang sleeps for ever (a hung benchmark); --fail exits 2; --garbage writes what no importer reads;
--report adds the process's own environment size and argument lengths to its output (`itself`).
--leak puts the secrets a real client may hold (an API key, an HF token, a URL's password, a bearer
token) into its output and its log, before it fails too; --gate PATH waits until PATH exists.
--daemon PIDFILE leaves a process of its own session behind (as `setsid cmd &` does), its pid
written to PIDFILE. The engine's URL is --url, or http://127.0.0.1:PORT with PORT read from
--port-file (where the engine wrote the port it bound).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor


def itself() -> dict[str, object]:
    """What the kernel gave this process: the bytes of its environment block and of each argument.

    Read from /proc/self, as laid out on the stack at exec (what moves alignment), else from Python.
    """
    try:
        with open("/proc/self/environ", "rb") as fh:
            environ = len(fh.read())
        with open("/proc/self/cmdline", "rb") as fh:
            argv = [len(a) for a in fh.read().split(b"\0")[:-1]]
    except OSError:
        environ = sum(len(k) + len(v) + 2 for k, v in os.environ.items())
        argv = [len(a) for a in [sys.executable, *sys.argv]]
    return {"harness_environ_bytes": environ, "harness_argv_bytes": argv}


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


# Each holds PLANTED, so a test finds any copy of any of them.
SECRETS = {
    "api_key": "sk-PLANTEDapikey0123456789",
    "hf_token": "hf_PLANTEDhftoken0123456789",
    "password": "PLANTEDpassw0rd",
    "bearer": "PLANTEDbearer0123456789",
}


def leak() -> dict[str, object]:
    s = SECRETS
    print(f"bench: launching with --api-key {s['api_key']}", flush=True)
    print(f"HF_TOKEN={s['hf_token']}", flush=True)
    print(f"bench: fetching https://admin:{s['password']}@127.0.0.1/models", flush=True)
    print(f"bench: header Authorization: Bearer {s['bearer']}", flush=True)
    return {
        "server_info": {"api_key": s["api_key"], "model_path": "tiny"},
        "launch_command": f"serve --api-key {s['api_key']} --hf-token {s['hf_token']}",
        "base_url": f"http://admin:{s['password']}@127.0.0.1:8000",
        "request_headers": f"Authorization: Bearer {s['bearer']}",
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
    ap.add_argument("--report", action="store_true")
    ap.add_argument("--leak", action="store_true")
    ap.add_argument("--gate", default="")
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
    leaked = leak() if args.leak else {}
    while args.gate and not os.path.exists(args.gate):
        time.sleep(0.01)
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
        result = measure(args.url, args.concurrency, args.requests, args.tokens)
        json.dump({**result, **(itself() if args.report else {}), **leaked}, fh)
    print(f"bench: wrote {args.output}", flush=True)


if __name__ == "__main__":
    main()
