"""Synthetic campaigns of N records for the benchmark.

The records are shaped like real ones (hypothesis, flags with notes, blockers with attempts,
shared blockers referenced from other records, results with metrics and baselines, related
slugs, tags, every tier and status) and all pass `improvements check`. The numbers in them
are made up on purpose: these campaigns exist only to be timed and are never shipped.
Generation is seeded, so two runs time the same bytes.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

STATUSES = ["proposed", "in-progress", "blocked", "adopted", "rejected", "superseded"]
WORDS = [
    "all-reduce",
    "pcie",
    "numa",
    "expert",
    "parallel",
    "tensor",
    "decode",
    "prefill",
    "kernel",
    "fused",
    "graph",
    "cache",
    "radix",
    "speculative",
    "draft",
    "eagle",
    "quantization",
    "fp4",
    "fp8",
    "moe",
    "router",
    "overlap",
    "scheduler",
    "chunked",
    "batch",
    "attention",
    "flashinfer",
    "triton",
    "cutlass",
    "nccl",
    "custom",
    "torch",
    "compile",
    "piecewise",
    "lookahead",
    "mtp",
]
THROUGHPUT = ["output_throughput", "total_throughput", "request_throughput", "input_throughput"]
LATENCY = ["ttft_p99", "ttft_mean", "itl_p99", "tpot_median", "e2e_latency_mean"]


def _slug(i: int, rng: random.Random) -> str:
    return f"{rng.choice(WORDS)}-{rng.choice(WORDS)}-{i}"


def _q(text: str) -> str:
    """A double-quoted YAML scalar (the text never holds quotes or backslashes)."""
    return f'"{text}"'


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def _record(i: int, slugs: list[str], shared: list[tuple[int, str]], rng: random.Random) -> str:
    status = STATUSES[i % len(STATUSES)]
    tier = 1 + (i * 7) % 3
    lines = [
        f"# Synthetic record {i} for the benchmark; its numbers are invented.",
        f"title: Idea {i}, {rng.choice(WORDS)} {rng.choice(WORDS)}",
        f"tier: {tier}",
        f"status: {status}",
        f"tags: [{', '.join(sorted({rng.choice(WORDS) for _ in range(3)}))}]",
        f"date: 2026-{1 + i % 12:02d}-{1 + i % 28:02d}",
        "summary: >-",
        f"  {_sentence(rng, 14)}",
        f"  {_sentence(rng, 12)}",
        "hypothesis: >-",
        f"  {_sentence(rng, 16)}",
        f"  {_sentence(rng, 16)}",
        f"  {_sentence(rng, 10)}",
        "expected:",
        f"  metric: {rng.choice(THROUGHPUT)}",
        f"  gain: {rng.randint(2, 40)}",
        f"  concurrency: {rng.choice([1, 8, 64, 256, 1024])}",
        "change:",
        "  flags:",
        # Each record's own flag and variable: adopted records' changes stack, and two that set
        # one flag or variable to different values would be a stack conflict.
        f"    - --{rng.choice(WORDS)}-{rng.choice(WORDS)}-{i} {rng.randint(1, 64)}",
        f"    - flag: --enable-{rng.choice(WORDS)}-{i}",
        f"      note: {_sentence(rng, 8)}",
        f"      versions: {_sentence(rng, 6)}",
        "  env:",
        f"    SGLANG_{rng.choice(WORDS).upper().replace('-', '_')}_{i}: {_q(str(rng.randint(0, 1)))}",
    ]
    # Blocked records own an open blocker; a few others point at a shared one defined elsewhere.
    blockers: list[str] = []
    if status == "blocked":
        blockers += [
            f"  - id: blocker-{i}",
            f"    title: {_sentence(rng, 7)}",
            f"    error: {_q('RuntimeError: ' + _sentence(rng, 6))}",
            "    cause: >-",
            f"      {_sentence(rng, 18)}",
            "    status: open",
            f"    upstream: [https://example.invalid/issues/{1000 + i}]",
            "    attempts:",
            f"      - action: {_sentence(rng, 9)}",
            "        outcome: failed",
            f"        detail: {_sentence(rng, 9)}",
            f"      - action: {_sentence(rng, 7)}",
            "        outcome: partial",
        ]
    earlier = [s for n, s in shared if n < i]
    if earlier and i % 4 == 1:
        blockers.append(f"  - ref: {rng.choice(earlier)}")
    if blockers:
        lines += ["blockers:", *blockers]
    if status in ("adopted", "rejected", "in-progress") or i % 5 == 0:
        lines.append("results:")
        for k in range(1 + i % 3):
            conc = [1, 64, 1024][k]
            metrics = [(m, round(rng.uniform(50, 4000), 1)) for m in rng.sample(THROUGHPUT, 2)]
            metrics += [(m, round(rng.uniform(5, 900), 2)) for m in rng.sample(LATENCY, 2)]
            lines += [
                f"  - label: concurrency {conc}",
                f"    concurrency: {conc}",
                "    request_rate: inf",
                "    workload:",
                "      dataset: random",
                f"      input_len: {rng.choice([128, 1024, 4096])}",
                f"      output_len: {rng.choice([128, 512, 1024])}",
                f"      num_prompts: {conc * 4}",
                "    metrics:",
                *(f"      {m}: {v}" for m, v in metrics),
                "    baseline:",
                *(f"      {m}: {round(v * rng.uniform(0.7, 1.1), 2)}" for m, v in metrics),
                f"    note: {_sentence(rng, 8)}",
            ]
    if status in ("adopted", "rejected"):
        lines += ["verdict: >-", f"  {_sentence(rng, 15)}", f"  {_sentence(rng, 10)}"]
    lines += ["caveats:", f"  - {_sentence(rng, 11)}"]
    others = [s for j, s in enumerate(slugs) if j != i - 1]
    if others:
        lines.append(f"related: [{', '.join(rng.sample(others, min(3, len(others))))}]")
    if status == "superseded":
        lines.append(f"superseded_by: {slugs[i % len(slugs)] if len(slugs) > 1 else slugs[0]}")
    lines += [
        "references:",
        f"  - title: {_q('Upstream discussion ' + str(i))}",
        f"    url: https://example.invalid/pull/{2000 + i}",
        f"    note: {_sentence(rng, 6)}",
    ]
    return "\n".join(lines) + "\n"


def make_campaign(dest: Path, n: int, seed: int = 8) -> list[Path]:
    """A campaign of `n` synthetic records at `dest`, with the shipped campaign.yaml and site config.

    Returns the record files, in number order.
    """
    if dest.exists():
        shutil.rmtree(dest)
    improvements = dest / "improvements"
    improvements.mkdir(parents=True)
    (dest / "results").mkdir()
    shutil.copy(REPO / "improvements" / "campaign.yaml", improvements / "campaign.yaml")
    if (REPO / "mkdocs.yml").exists():
        shutil.copy(REPO / "mkdocs.yml", dest / "mkdocs.yml")
    rng = random.Random(seed)
    slugs = [_slug(i, rng) for i in range(1, n + 1)]
    shared = [(i, f"blocker-{i}") for i in range(1, n + 1) if STATUSES[i % len(STATUSES)] == "blocked"]
    width = max(2, len(str(n)))
    paths = []
    for i, slug in enumerate(slugs, 1):
        path = improvements / f"{i:0{width}d}-{slug}.yaml"
        path.write_text(_record(i, slugs, shared, rng), encoding="utf-8")
        paths.append(path)
    return paths


def touch_record(path: Path, generation: int) -> None:
    """Change one record the way an edit does: a new sentence in its summary."""
    text = path.read_text(encoding="utf-8")
    marker = "summary: >-\n"
    text = text.replace(marker, f"{marker}  Edited for rebuild {generation}.\n", 1)
    path.write_text(text, encoding="utf-8")


def chart_record(paths: list[Path]) -> Path:
    """A record with results at three concurrencies, so that it has a chart."""
    return next(p for p in paths if "concurrency: 1024" in p.read_text(encoding="utf-8"))


def touch_metric(path: Path, generation: int) -> None:
    """Change one measured number of one record, as a new run would: its first throughput."""
    lines = path.read_text(encoding="utf-8").split("\n")
    at = next(i for i, line in enumerate(lines) if line.strip() == "metrics:") + 1
    name, value = lines[at].split(":")
    lines[at] = f"{name}: {float(value) + generation / 10:.1f}"
    path.write_text("\n".join(lines), encoding="utf-8")


def retitle(path: Path, title: str) -> None:
    """Give a record a new title (which changes the navigation of every page)."""
    lines = path.read_text(encoding="utf-8").split("\n")
    lines = [f"title: {title}" if line.startswith("title: ") else line for line in lines]
    path.write_text("\n".join(lines), encoding="utf-8")
