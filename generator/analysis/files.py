"""Two sets of benchmark runs compared without a campaign: what `improvements compare` decides.

The runs of each side are grouped by what must match for two runs to compare at all (the kind
of benchmark, its load and its workload: `project.comparable`'s keys), as a campaign matches a
result with its baseline; each group found on both sides is one comparison of one metric, each
run one repetition. The statistics are `stats.compare`'s and the caveats `design.design`'s, the
same a record's page reads, so a one-off comparison and a campaign's say the same thing of the
same runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from generator.analysis.comparison import Comparison
from generator.analysis.design import Design, design, launch_means
from generator.analysis.stats import compare
from generator.model import metrics
from generator.model.quantity import Stat, stat
from generator.project.comparable import LOAD_KEYS, WORKLOAD_KEYS
from generator.project.matching import Origin, shown_metrics
from generator.project.runs.run import Run

# The metric compared when none is named: the first of these both sides measured, else the
# first both share in the order pages list metrics.
DEFAULT_METRICS = ("output_throughput", "request_throughput", "total_throughput", "decode_throughput")


@dataclass(frozen=True)
class Group:
    """One load and workload: the runs of each side at it, and their comparison when both have some."""

    # (setting, value) pairs that define the group, in the order `LOAD_KEYS + WORKLOAD_KEYS`.
    key: tuple[tuple[str, object], ...]
    kind: str
    metric: str
    # The repetitions as measured, one per run, each side in file order.
    values: tuple[tuple[float, ...], tuple[float, ...]]
    comparison: Comparison | None
    design: Design
    # Why no comparison was made ("only in the baseline files", "no `ttft_p99` in ..."), or None.
    missing: str | None = None

    @property
    def summaries(self) -> tuple[Stat | None, Stat | None]:
        """Each side's values summarised as a page shows them (None for a side without any)."""
        return (
            stat(list(self.values[0])) if self.values[0] else None,
            stat(list(self.values[1])) if self.values[1] else None,
        )


def _key(run: Run) -> tuple[str, tuple[tuple[str, object], ...]]:
    s = run.settings
    return run.kind, tuple((k, s[k]) for k in (*LOAD_KEYS, *WORKLOAD_KEYS) if s.get(k) is not None)


def _origins(runs: Sequence[tuple[str, Run]]) -> tuple[Origin, ...]:
    return tuple(Origin(run.launch, run.started, shown) for shown, run in runs)


def default_metric(baseline: Sequence[Run], candidate: Sequence[Run]) -> str | None:
    """The metric compared when none is named, or None when the two sides share none."""
    shared = [
        name
        for name in dict.fromkeys(n for r in baseline for n in shown_metrics(r))
        if any(name in r.metrics for r in candidate)
    ]
    for name in DEFAULT_METRICS:
        if name in shared:
            return name
    return shared[0] if shared else None


def compare_runs(
    baseline: Sequence[tuple[str, Run]],
    candidate: Sequence[tuple[str, Run]],
    metric: str,
    *,
    vocabulary: metrics.Vocabulary = metrics.BUILTIN,
    alpha: float = 0.05,
    min_effect: float = 1.0,
) -> list[Group]:
    """Each load and workload of the two sides (each run with the file it came from) compared on
    `metric`, in the order the baseline's runs list them, then the candidate's own."""
    sides: dict[tuple[str, tuple[tuple[str, object], ...]], tuple[list[tuple[str, Run]], list[tuple[str, Run]]]] = {}
    for i, runs in enumerate((baseline, candidate)):
        for shown, run in runs:
            sides.setdefault(_key(run), ([], []))[i].append((shown, run))
    found = vocabulary.lookup(metric)
    higher = found.higher_is_better if found is not None else True
    out: list[Group] = []
    for (kind, key), (base, cand) in sides.items():
        with_metric = [[(s, r) for s, r in side if metric in r.metrics] for side in (base, cand)]
        values = (
            tuple(r.metrics[metric] for _, r in with_metric[0]),
            tuple(r.metrics[metric] for _, r in with_metric[1]),
        )
        missing = None
        if not base or not cand:
            missing = "only in the candidate files" if not base else "only in the baseline files"
        elif not values[0] or not values[1]:
            missing = f"no `{metric}` in the {'baseline' if not values[0] else 'candidate'} runs"
        if missing is not None:
            out.append(Group(key, kind, metric, values, None, Design(), missing))
            continue
        origins = (_origins(with_metric[1]), _origins(with_metric[0]))
        chosen = design({metric: (values[1], values[0])}, origins, metric=metric, alpha=alpha)
        own, against = list(values[1]), list(values[0])
        if chosen.by_launch is not None:
            # Runs of one launch are one observation (as a record's comparison counts them).
            own, against = launch_means(own, origins[0]), launch_means(against, origins[1])
        c = compare(own, against, higher_is_better=higher, alpha=alpha, min_effect=min_effect)
        out.append(Group(key, kind, metric, values, c, chosen))
    return out
