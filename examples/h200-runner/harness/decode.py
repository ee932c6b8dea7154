#!/usr/bin/env python3
"""One launch of a decode configuration: HF transformers `generate`, greedy, on one CUDA GPU.

A random-weight Llama-architecture model of about 1.1B parameters (the configuration of the
`h200-decode` example) is built in this process, `--warmup` untimed generate calls run, then
`--runs` timed ones. Each call is one JSON object on its own line in `--out`, warm-ups marked
`"warmup": true`; the file is written once at the end, so a killed launch leaves no file.
A process is one launch: its timed calls are sub-samples of it, not independent repetitions.

Timing: `torch.cuda.synchronize()` then `time.perf_counter()` each time generate hands logits to
a LogitsProcessor (once after the prefill, then after each decode step). TTFT is from just
before `generate` to the first logits, so it includes generate's setup and cache creation.
"""

import argparse
import datetime
import hashlib
import json
import os
import socket
import sys
import time

import numpy as np
import torch
import transformers
from transformers import LlamaConfig, LlamaForCausalLM, LogitsProcessor, LogitsProcessorList

MODEL_CFG = dict(
    hidden_size=2048, intermediate_size=8192, num_hidden_layers=16, num_attention_heads=32,
    num_key_value_heads=8, vocab_size=32000, max_position_embeddings=4096,
    bos_token_id=1, eos_token_id=2, pad_token_id=0,
)


class StepTimer(LogitsProcessor):
    def __init__(self) -> None:
        self.t: list[float] = []

    def __call__(self, input_ids, scores):
        torch.cuda.synchronize()
        self.t.append(time.perf_counter())
        return scores


def utcnow() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--attn", choices=["eager", "sdpa"], default="eager")
    ap.add_argument("--cache", choices=["dynamic", "static"], default="dynamic",
                    help="static: cache_implementation='static' with generate's auto-compile disabled")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--prompt-len", type=int, default=256)
    ap.add_argument("--new-tokens", type=int, default=64)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0, help="the prompts' seed (the weights always use seed 0)")
    args = ap.parse_args()
    started = utcnow()
    t_launch = time.perf_counter()

    torch.manual_seed(0)
    torch.cuda.manual_seed_all(0)
    cfg = LlamaConfig(**MODEL_CFG, attn_implementation=args.attn)
    with torch.device("cuda"):
        model = LlamaForCausalLM(cfg).to(torch.bfloat16).eval()
    load_s = time.perf_counter() - t_launch
    gpu = torch.cuda.get_device_properties(0)
    common = dict(
        attn=args.attn, cache=args.cache, batch=args.batch, prompt_len=args.prompt_len,
        seed=args.seed, pid=os.getpid(), launch_started=started, model_load_s=round(load_s, 3),
        gpu=gpu.name, torch=torch.__version__, transformers=transformers.__version__,
        host_sha256_16=hashlib.sha256(socket.gethostname().encode()).hexdigest()[:16],
        env_alloc_conf=os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
    )
    lines = []
    g = torch.Generator().manual_seed(args.seed)
    for i in range(args.warmup + args.runs):
        warm = i < args.warmup
        ids = torch.randint(3, MODEL_CFG["vocab_size"], (args.batch, args.prompt_len), generator=g).cuda()
        timer = StepTimer()
        kw = dict(do_sample=False, max_new_tokens=args.new_tokens, min_new_tokens=args.new_tokens,
                  pad_token_id=0, eos_token_id=2, logits_processor=LogitsProcessorList([timer]))
        if args.cache == "static":
            kw.update(cache_implementation="static", disable_compile=True)
        torch.cuda.synchronize()
        rec = dict(common, call=i, warmup=warm, utc_start=utcnow())
        t0 = time.perf_counter()
        out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), **kw)
        torch.cuda.synchronize()
        t_end = time.perf_counter()
        t = np.array(timer.t)
        step = np.diff(t) * 1e3
        new = int(out.shape[1] - args.prompt_len)
        rec.update(
            utc_end=utcnow(), new_tokens=new, ttft_ms=(t[0] - t0) * 1e3,
            step_ms_p50=float(np.percentile(step, 50)), step_ms_p99=float(np.percentile(step, 99)),
            step_ms_max=float(step.max()), total_gen_s=t_end - t0,
            output_tok_s=args.batch * new / (t_end - t0),
            decode_tok_s=args.batch * (len(t) - 1) / float(t[-1] - t[0]),
            peak_mem_gib=torch.cuda.max_memory_allocated() / 2**30,
        )
        lines.append(json.dumps(rec, sort_keys=True))
        del out, ids
    tmp = args.out + ".part"
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, args.out)
    print(f"launch {os.getpid()}: {args.attn}/{args.cache} batch {args.batch}: "
          + ", ".join(f"{json.loads(x)['output_tok_s']:.1f}" for x in lines[args.warmup:]) + " tok/s",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
