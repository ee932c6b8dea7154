"""Evidence as the sources report it (`reported`, `reported_change`, `finding`), as text.

Such evidence is shown as written and never compared: nothing here computes a change, a
sign or a rank, and the analysis never counts it as a measured gain (it reads only `metrics`
and imported runs). Pages, the summary and the export all describe it through this module,
so they say the same thing about the same record.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from generator.model import metrics
from generator.model.quantity import fmt_percent, fmt_value
from generator.model.record import Record
from generator.model.result import Range, Ratio, Result

# "measured": numbers a comparison may use (typed `metrics` or an imported run);
# "reported": only evidence as the sources gave it.
Evidence = Literal["measured", "reported"]


@dataclass(frozen=True)
class ReportedMetric:
    """Figures (or a change) of one metric as reported, labelled from the metric vocabulary."""

    name: str
    label: str
    unit: str
    # "901, 927" for figures, "+7.3%" for a change; a "~" range keeps its "~".
    text: str
    quote: str | None = None
    note: str | None = None


def _metric(name: str) -> tuple[str, str]:
    metric = metrics.lookup(name)
    return (metric.label, metric.unit) if metric else (name, "")


def figures(result: Result) -> list[ReportedMetric]:
    """The result's `reported` figures, in the source's order."""
    out = []
    for rep in result.reported:
        label, unit = _metric(rep.metric)
        text = ", ".join(fmt_value(v) for v in rep.values)
        out.append(ReportedMetric(rep.metric, label, unit, text, rep.quote, rep.note))
    return out


def changes(result: Result) -> list[ReportedMetric]:
    """The result's `reported_change`s, signed as the source signs them; a ratio as stated."""
    out = []
    for name, v in result.reported_change.items():
        label, unit = _metric(name)
        if isinstance(v, Ratio):
            # As stated ("106x lower"), its percent beside it: never a measured change.
            text = f"{v.text} ({fmt_percent(v.percent)})"
        else:
            text = f"{fmt_value(v)}%" if isinstance(v, Range) else fmt_percent(v)
        out.append(ReportedMetric(name, label, unit, text))
    return out


def has_reported(result: Result) -> bool:
    return bool(result.reported or result.reported_change or result.finding)


def result_evidence(result: Result) -> Evidence:
    """What one result rests on (the model requires one or the other)."""
    return "measured" if result.metrics or result.run is not None else "reported"


def evidence(record: Record) -> Evidence | None:
    """What a record's results rest on, its variants' included (a record measured only under its
    variants read `null`, issue 51): "measured" when any result is; None when it has no results."""
    kinds = {result_evidence(r) for r in [*record.results, *(r for v in record.variants for r in v.results)]}
    return "measured" if "measured" in kinds else ("reported" if kinds else None)


def result_text(result: Result) -> str | None:
    """One result's reported evidence in a line: "901, 927 tok/s output_throughput at concurrency 512"."""
    if not has_reported(result):
        return None
    parts = [" ".join(x for x in (f.text, f.unit, f.name) if x) for f in figures(result)]
    parts += [f"{c.text} {c.name}" for c in changes(result)]
    where = f" at concurrency {result.concurrency}" if result.concurrency is not None else ", concurrency not recorded"
    if not parts:
        return f"{result.finding}{where}"
    finding = f" ({result.finding})" if result.finding else ""
    return f"{', '.join(parts)}{where}{finding}"


def record_text(record: Record) -> str | None:
    """Every result's reported evidence, in record order, or None when there is none."""
    texts = [t for t in (result_text(r) for r in record.results) if t]
    return "; ".join(texts) or None
