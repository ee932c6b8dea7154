"""A CPU stand-in for examples/h200-runner's harness/decode.py: the same options, the same output.

It writes one JSON object per call on its own line in `--out` (warm-ups marked), with the fields
the example's `decode-harness` format reads, so the example's own commands run on a machine
without a GPU. The numbers are made up, not measured: SDPA reads about 1.5x eager's throughput,
each launch has its own level and each call its own noise, so re-running a command adds
different runs, as re-running on the GPU does.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import random
import sys


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--attn", choices=["eager", "sdpa"], default="eager")
    ap.add_argument("--cache", choices=["dynamic", "static"], default="dynamic")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--prompt-len", type=int, default=256)
    ap.add_argument("--new-tokens", type=int, default=64)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = random.Random(os.urandom(16))
    level = 1000.0 * (1.5 if args.attn == "sdpa" else 1.0) * rng.lognormvariate(0.0, 0.05)
    lines = []
    for i in range(args.warmup + args.runs):
        now = datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds")
        tok_s = level * rng.lognormvariate(0.0, 0.03)
        step = args.batch / tok_s * 1000
        row = {
            "attn": args.attn,
            "cache": args.cache,
            "batch": args.batch,
            "prompt_len": args.prompt_len,
            "new_tokens": args.new_tokens,
            "seed": args.seed,
            "pid": os.getpid(),
            "call": i,
            "warmup": i < args.warmup,
            "utc_start": now,
            "utc_end": now,
            "output_tok_s": tok_s,
            "decode_tok_s": tok_s * 1.05,
            "ttft_ms": 20.0 * rng.lognormvariate(0.0, 0.05),
            "step_ms_p50": step,
            "step_ms_p99": step * 1.2,
        }
        lines.append(json.dumps(row, sort_keys=True))
    with open(args.out + ".part", "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(args.out + ".part", args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
