"""The one metric vocabulary: canonical names, units and which direction is better.

`check`, the importers and the renderer all read metric names through `lookup`, so a
quantity has one name everywhere. Latency families accept any statistic by pattern
(``ttft_p99``, ``itl_p99.9``, ``e2e_latency_max``) because benchmark tools add
percentiles at run time.

A campaign may define metrics of its own (`metrics:` in campaign.yaml). They are passed
along as a `Vocabulary` (the built-in names plus the campaign's), never registered here, so
no module keeps a campaign's names between runs.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache


@dataclass(frozen=True)
class Metric:
    name: str
    unit: str
    higher_is_better: bool
    label: str


_FIXED: dict[str, tuple[str, bool, str]] = {
    "output_throughput": ("tok/s", True, "Output token throughput"),
    "total_throughput": ("tok/s", True, "Total token throughput"),
    "input_throughput": ("tok/s", True, "Input token throughput"),
    # Some sources say only "tok/s" without saying output or total; keep that honest.
    "throughput": ("tok/s", True, "Token throughput (kind not recorded)"),
    "request_throughput": ("req/s", True, "Request throughput"),
    "goodput": ("req/s", True, "Request goodput"),
    "max_output_throughput": ("tok/s", True, "Peak output token throughput"),
    "prefill_throughput": ("tok/s", True, "Prefill throughput"),
    # No statistic in the label: an import takes a run's median, a typed value may be a mean,
    # and repetitions are shown as their mean; the page says which (issue #12).
    "decode_throughput": ("tok/s", True, "Decode throughput"),
    "overall_throughput": ("tok/s", True, "Overall throughput"),
    "last_gen_throughput": ("tok/s", True, "Last-generation throughput"),
    "steady_state_output_throughput": ("tok/s", True, "Steady-state output throughput"),
    "prefill_latency": ("ms", False, "Prefill latency"),
    "decode_latency": ("ms", False, "Decode step latency"),
    "total_latency": ("ms", False, "Total latency"),
    # bench_one_batch_server: time to first token of the last request in the batch.
    "last_ttft": ("ms", False, "Time to first token (last request of the batch)"),
    "accept_length": ("tokens", True, "Speculative accept length"),
    "cache_hit_rate": ("ratio", True, "Prefix cache hit rate"),
    "duration": ("s", False, "Benchmark duration"),
    "completed": ("requests", True, "Completed requests"),
    "failed": ("requests", False, "Failed requests"),
    "power": ("W", False, "GPU power draw"),
}

_LATENCY_FAMILIES: dict[str, str] = {
    "ttft": "Time to first token",
    "tpot": "Time per output token",
    "itl": "Inter-token latency",
    "e2e_latency": "End-to-end latency",
}
_STATS = {"mean": "mean", "median": "median", "std": "std dev", "min": "min", "max": "max"}
_LATENCY_RE = re.compile(r"^(ttft|tpot|itl|e2e_latency)_(mean|median|std|min|max|p(\d{1,2}(?:\.\d+)?))$")
# A campaign's own metric names: lowercase words joined by `_`, like the built-in ones.
NAME_RE = r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$"
# Time units a value may be written in, in milliseconds; "us" is µs for keyboards without µ.
TIME_UNITS: dict[str, float] = {"s": 1000.0, "ms": 1.0, "µs": 1e-3, "us": 1e-3, "ns": 1e-6}


@cache
def lookup(name: str) -> Metric | None:
    """The metric called `name`, or None when the vocabulary does not know it."""
    fixed = _FIXED.get(name)
    if fixed is not None:
        unit, higher, label = fixed
        return Metric(name, unit, higher, label)
    m = _LATENCY_RE.match(name)
    if m is None:
        return None
    family, stat, pct = m.group(1), m.group(2), m.group(3)
    if pct is not None and not 0 < float(pct) < 100:
        return None
    stat_label = f"P{pct}" if pct is not None else _STATS[stat]
    return Metric(name, "ms", False, f"{_LATENCY_FAMILIES[family]} ({stat_label})")


def is_latency(metric: Metric) -> bool:
    """A latency an SLO can limit: in ms, lower is better, and not a spread (`_std`)."""
    return metric.unit == "ms" and not metric.higher_is_better and not metric.name.endswith("_std")


# --- the benchmark tools' own keys --------------------------------------------------------------

# key a benchmark file writes -> vocabulary name, in the vocabulary's unit. The importers read
# files through this table and records accept the same keys typed by hand, so a quantity has
# one name however it arrived (`total_token_throughput` is `total_throughput`).
TOOL_KEYS: dict[str, str] = {
    "output_throughput": "output_throughput",
    "total_throughput": "total_throughput",
    "total_token_throughput": "total_throughput",
    "input_throughput": "input_throughput",
    "request_throughput": "request_throughput",
    "request_goodput": "goodput",
    "request_goodput:": "goodput",
    "max_output_tokens_per_s": "max_output_throughput",
    "accept_length": "accept_length",
    "spec_decode_acceptance_length": "accept_length",
    "duration": "duration",
    "completed": "completed",
    "failed": "failed",
}

# mean_ttft_ms, p99.9_e2el_ms, median_e2e_latency_ms: statistic first, then the family, in ms.
LATENCY_KEY = re.compile(r"^(mean|median|std|p\d{1,2}(?:\.\d+)?)_(ttft|tpot|itl|e2el|e2e_latency)_ms$")
_KEY_FAMILY = {"ttft": "ttft", "tpot": "tpot", "itl": "itl", "e2el": "e2e_latency", "e2e_latency": "e2e_latency"}


def latency_metric(key: str) -> str | None:
    """The vocabulary name of a latency key (`p99.9_ttft_ms` -> `ttft_p99.9`), or None."""
    m = LATENCY_KEY.match(key)
    if m is None:
        return None
    stat = m.group(1)
    if stat.startswith("p") and stat.endswith(".0"):
        stat = stat[:-2]
    name = f"{_KEY_FAMILY[m.group(2)]}_{stat}"
    return name if lookup(name) is not None else None


def tool_key(key: str) -> str | None:
    """The vocabulary name of a key as a benchmark tool writes it (`p99_ttft_ms` -> `ttft_p99`), or None."""
    return TOOL_KEYS.get(key) or latency_metric(key)


def known_names() -> list[str]:
    """Every fixed name plus the common latency statistics, for suggestions and docs."""
    names = list(_FIXED)
    for family in _LATENCY_FAMILIES:
        names += [f"{family}_{s}" for s in ("mean", "median", "std", "p90", "p95", "p99")]
    return names


def suggest(name: str) -> str | None:
    """The nearest known metric name, for a "did you mean" hint."""
    normalized = name.strip().lower().replace("-", "_").replace(" ", "_")
    if lookup(normalized) is not None:
        return normalized
    close = difflib.get_close_matches(normalized, known_names(), n=1, cutoff=0.6)
    return close[0] if close else None


def conversion(unit: str, to: str) -> float | None:
    """The factor that turns a value in `unit` into one in `to`, or None when they do not convert."""
    if unit == to:
        return 1.0
    if unit in TIME_UNITS and to in TIME_UNITS:
        return TIME_UNITS[unit] / TIME_UNITS[to]
    return None


@dataclass(frozen=True)
class Vocabulary:
    """The built-in metrics plus a campaign's own (`metrics:` in campaign.yaml)."""

    custom: tuple[Metric, ...] = ()

    @classmethod
    def of(cls, definitions: Mapping[str, tuple[str, bool, str]]) -> Vocabulary:
        """From name -> (unit, higher is better, label)."""
        return cls(tuple(Metric(n, u, h, lab) for n, (u, h, lab) in sorted(definitions.items())))

    def lookup(self, name: str) -> Metric | None:
        for metric in self.custom:
            if metric.name == name:
                return metric
        return lookup(name)

    def suggest(self, name: str) -> str | None:
        normalized = name.strip().lower().replace("-", "_").replace(" ", "_")
        if self.lookup(normalized) is not None:
            return normalized
        close = difflib.get_close_matches(normalized, [m.name for m in self.custom] + known_names(), n=1, cutoff=0.6)
        return close[0] if close else None


BUILTIN = Vocabulary()
