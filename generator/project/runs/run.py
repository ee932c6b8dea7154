"""One imported benchmark run, normalized to the metric vocabulary.

A run keeps what defines it (`settings`: engine, model, parallel layout, workload, load) apart
from what it measured (`metrics`, in the vocabulary's units) and from quantities that are
observations but not comparable metrics (`measured`: the mean concurrency a serving benchmark
saw, token totals). Matching and comparability work on `settings` only.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from generator.model import metrics as vocabulary
from generator.model.import_format import BUILTIN_FORMATS
from generator.model.settings import SETTING_ORDER

# The stored run's format (results/runs/<id>.json `format_version`; `format` is the importer's
# name). 1: written before it was versioned (no key), read as it is; 2: carries the key. Raise it
# whenever a run file written by this version could not be read as it is by an older one.
RUN_FORMAT = 2

# Metrics that say a run happened but not how fast: a run needs something else to be usable.
BOOKKEEPING = frozenset({"duration", "completed", "failed"})

RequestRate = float | str  # a number, "inf" or "trace"


@dataclass
class Run:
    """A run as stored in results/runs/<id>.json (see `to_json`)."""

    id: str
    format: str
    settings: dict[str, Any]
    # name -> value in the vocabulary's unit
    metrics: dict[str, float]
    # name -> the key in the benchmark file it came from
    keys: dict[str, str] = field(default_factory=dict)
    # name -> how the value was converted, e.g. "s -> ms"
    conversions: dict[str, str] = field(default_factory=dict)
    measured: dict[str, int | float] = field(default_factory=dict)
    unmapped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    source: dict[str, Any] = field(default_factory=dict)
    # What the file states about where it was measured (results/provenance.py): name -> value,
    # and name -> the key it was read from.
    provenance: dict[str, str] = field(default_factory=dict)
    provenance_keys: dict[str, str] = field(default_factory=dict)
    # How the run was made, apart from what defines it (never a setting, so two launches of one
    # configuration still match): the server or process launch it came from (runs that share a
    # launch are sub-samples of one observation, not repetitions), and when it started (ISO 8601
    # with a UTC offset), which tells interleaved arms from arms run one after the other.
    launch: str | None = None
    started: str | None = None

    @property
    def concurrency(self) -> int | None:
        """Requests in flight as configured: the concurrency limit, or the batch size."""
        value = self.settings.get("max_concurrency")
        if value is None:
            value = self.settings.get("batch_size")
        return value if isinstance(value, int) else None

    @property
    def request_rate(self) -> RequestRate | None:
        return self.settings.get("request_rate")

    @property
    def kind(self) -> str:
        """Serving runs and single-batch runs measure different things and never match; nor does
        a run of a campaign's own harness (`import_formats`) match another harness's."""
        if self.format.startswith("sglang-bench-one-batch"):
            return "batch"
        return "serving" if self.format in BUILTIN_FORMATS else self.format

    def unit(self, name: str) -> str:
        metric = vocabulary.lookup(name)
        return metric.unit if metric is not None else ""

    def to_json(self) -> dict[str, Any]:
        return {
            "format_version": RUN_FORMAT,
            "id": self.id,
            "format": self.format,
            "settings": {k: self.settings[k] for k in _ordered(self.settings)},
            "metrics": {
                name: {
                    "value": value,
                    "unit": self.unit(name),
                    "key": self.keys.get(name, name),
                    **({"converted": self.conversions[name]} if name in self.conversions else {}),
                }
                for name, value in self.metrics.items()
            },
            "measured": dict(self.measured),
            "unmapped": sorted(self.unmapped),
            "notes": list(self.notes),
            "source": dict(self.source),
            # Only when the file states any, so runs imported before keep their bytes.
            **(
                {
                    "provenance": {
                        k: {"value": v, "key": self.provenance_keys.get(k, k)} for k, v in self.provenance.items()
                    }
                }
                if self.provenance
                else {}
            ),
            # Only when known, so runs imported before keep their bytes.
            **({"launch": self.launch} if self.launch is not None else {}),
            **({"started": self.started} if self.started is not None else {}),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Run:
        """The stored run; one of an older format read as it migrates, one of a newer refused (ValueError)."""
        version = data.get("format_version", 1)
        if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= RUN_FORMAT:
            raise ValueError(
                f"format_version {version!r}: this improvements reads run files of formats 1 to {RUN_FORMAT}; "
                "it was written by a newer improvements (upgrade to read it)"
            )
        # Format 1 holds the same fields as 2, without the version: nothing to migrate.
        metrics_data = data.get("metrics") or {}
        return cls(
            id=str(data["id"]),
            format=str(data["format"]),
            settings=dict(data.get("settings") or {}),
            metrics={k: float(v["value"]) for k, v in metrics_data.items()},
            keys={k: str(v.get("key", k)) for k, v in metrics_data.items()},
            conversions={k: str(v["converted"]) for k, v in metrics_data.items() if "converted" in v},
            measured=dict(data.get("measured") or {}),
            unmapped=list(data.get("unmapped") or []),
            notes=list(data.get("notes") or []),
            source=dict(data.get("source") or {}),
            provenance={k: str(v["value"]) for k, v in (data.get("provenance") or {}).items()},
            provenance_keys={k: str(v.get("key", k)) for k, v in (data.get("provenance") or {}).items()},
            launch=str(data["launch"]) if data.get("launch") is not None else None,
            started=str(data["started"]) if data.get("started") is not None else None,
        )

    def describe(self) -> str:
        """A short human label: workload and load, as a default result label."""
        s = self.settings
        parts: list[str] = []
        if s.get("run_name"):
            parts.append(str(s["run_name"]))
        workload = s.get("dataset") or ""
        if s.get("input_len") is not None or s.get("output_len") is not None:
            lens = f"{s.get('input_len', '?')}/{s.get('output_len', '?')}"
            workload = f"{workload} {lens}".strip()
        if workload:
            parts.append(workload)
        if s.get("batch_size") is not None:
            parts.append(f"batch {s['batch_size']}")
        elif s.get("max_concurrency") is not None:
            parts.append(f"concurrency {s['max_concurrency']}")
        rate = s.get("request_rate")
        if rate is not None and not (rate == "inf" and s.get("max_concurrency") is not None):
            parts.append(
                "rate unlimited" if rate == "inf" else "trace replay" if rate == "trace" else f"rate {rate:g}/s"
            )
        return ", ".join(parts) or self.format


def _ordered(settings: dict[str, Any]) -> list[str]:
    known = [k for k in SETTING_ORDER if k in settings]
    return known + sorted(k for k in settings if k not in SETTING_ORDER)


# --- normalizing values -----------------------------------------------------------------------


def number(value: Any) -> float | None:
    """A finite number, or None (missing, null, text, boolean, NaN or infinite)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        v = float(value)
    except OverflowError:  # an integer of hundreds of digits: no float holds it
        return None
    return v if math.isfinite(v) else None


# A number as JSON writes one, in ASCII digits: Python's `int` and `float` also take `1_000`,
# Arabic-Indic digits and `infinity`, which no benchmark writes as a number.
_INTEGER = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def plain_number(text: str) -> int | float | None:
    """The number `text` writes in plain ASCII decimal (`1000`, `-2.5e-1`), or None: CSV cells and
    console values are read by this one rule."""
    try:
        if _INTEGER.fullmatch(text):
            return int(text)
        if _DECIMAL.fullmatch(text):
            return float(text)
    except ValueError:  # an integer of more digits than Python converts
        return None
    return None


def quantity(value: Any) -> int | float | None:
    """A finite number that stays an integer when it is one (token counts, request counts)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return number(value)


def integer(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def request_rate(value: Any) -> RequestRate | None:
    """Requests per second: a number above 0 (as a record's `request_rate`), "inf" (no limit:
    Infinity, "inf", "infinity") or "trace"; None for anything else."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, float) and math.isinf(value) and value > 0:
        return "inf"  # SGLang writes the bare JSON token Infinity
    if isinstance(value, int | float):
        rate = number(value)
        return rate if rate is not None and rate > 0 else None
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("inf", "infinity", "+inf"):
            return "inf"
        if text == "trace":
            return "trace"
        rate = plain_number(text)
        # Text that overflows (`1e999`) is no rate, not an unlimited one.
        return request_rate(rate) if rate is not None and math.isfinite(rate) else None
    return None


def started_utc(value: Any) -> str | None:
    """A start time as ISO 8601 in UTC, from ISO 8601 with an offset or from epoch seconds; else None.

    A time without an offset is refused (None): read as the importing machine's local time it
    could be hours off, and the order of two arms is what it is for.
    """
    import datetime as dt

    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        if not math.isfinite(value) or not 0 <= value < 32503680000:  # up to the year 3000
            return None
        when = dt.datetime.fromtimestamp(value, dt.UTC)
    elif isinstance(value, str):
        text = value.strip()
        try:
            when = dt.datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text)
        except ValueError:
            return None
        if when.tzinfo is None or when.utcoffset() is None:
            return None
        when = when.astimezone(dt.UTC)
    else:
        return None
    return when.isoformat()


# The latency keys are the vocabulary's, so records typed by hand accept them too.
latency_metric = vocabulary.latency_metric


def run_id(prefix: str, fmt: str, content: Any) -> str:
    """A run's id: readable prefix plus a hash of its (redacted) content, so re-imports match."""
    canonical = json.dumps([fmt, content], sort_keys=True, ensure_ascii=False, allow_nan=True)
    digest = hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:10]
    slug = re.sub(r"[^a-z0-9]+", "-", prefix.lower()).strip("-")
    return f"{slug}-{digest}"


# A part of a run id longer than this (a 400-digit concurrency) would make a file name the
# file system refuses; the id's hash tells runs apart without it.
_MAX_ID_PART = 24


def load_run_id(prefix: str, run: Run, fmt: str, content: Any) -> str:
    """`run_id` with the run's load after `prefix`: its batch size, concurrency or request rate."""
    s, rate = run.settings, run.request_rate
    if s.get("batch_size") is not None:
        load = f"bs{s['batch_size']}"
    elif s.get("max_concurrency") is not None:
        load = f"c{s['max_concurrency']}"
    elif rate is None:
        load = ""
    else:
        load = f"rr{rate}" if isinstance(rate, str) else "rr" + f"{rate:g}".replace(".", "p")
    return run_id("-".join(p for p in (prefix, load) if p and len(p) <= _MAX_ID_PART), fmt, content)
