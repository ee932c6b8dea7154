"""Strip charts: every repetition of both sides of one comparison, one chart per result.

A result gets one when its chart metric has at least two repetitions on each side (a strip
of one dot says nothing about spread, and `charts.strip_chart` refuses it). The chart metric
is the record's primary metric when the result compares it that way, else the first metric
that does. The numbers come from the analysis; nothing is compared here.
"""

from __future__ import annotations

from generator.analysis.campaign import Analysis, ResolvedResult
from generator.views.paths import ChartFile, chart_file, strip_path, variant_strip_path


def _chart_metric(resolved: ResolvedResult, primary: str | None) -> str | None:
    names = [primary] if primary is not None and primary in resolved.comparisons else []
    names += [n for n in resolved.comparisons if n != primary]
    for name in names:
        c = resolved.comparisons.get(name)
        mine, theirs = resolved.samples.get(name, ((), ()))
        # Summary statistics have an n but no repetitions to draw.
        if c is not None and len(mine) >= 2 and len(theirs) >= 2:
            return name
    return None


def strips(analysis: Analysis) -> list[ChartFile]:
    """The strip chart of every result of every record that has one, in series order."""
    from generator.charts import strip_chart

    project = analysis.project
    # The campaign's vocabulary: its own metrics (`metrics:` in campaign.yaml) get strips too.
    vocabulary = project.campaign.vocabulary()
    out: list[ChartFile] = []
    for entry in analysis.records:
        rec = entry.file
        # The record's own results, then each variant's (their p and test are on the page too).
        located = [(strip_path(project, rec, i), f"{rec.slug}-{i + 1}", "", r) for i, r in enumerate(entry.results)]
        located += [
            (variant_strip_path(project, rec, j, i), f"{rec.slug}--{j + 1}-{i + 1}", f"{v.label}, ", r)
            for j, (v, rs) in enumerate(zip(rec.record.variants, entry.variant_results, strict=True))
            for i, r in enumerate(rs)
        ]
        for path, chart_id, arm, resolved in located:
            name = _chart_metric(resolved, entry.primary_metric)
            metric = vocabulary.lookup(name) if name else None
            if name is None or metric is None:
                continue
            title = f"{rec.record.title}: {arm}{resolved.result.label}, {metric.label}, every repetition"
            svg = strip_chart(
                f"strip-{chart_id}",
                title,
                list(resolved.samples[name][1]),
                list(resolved.samples[name][0]),
                means=resolved.sample_means[name][::-1],
                axis_label=f"{metric.label} ({metric.unit})",
                labels=("baseline", "this record" if not arm else "this variant"),
            )
            out.append(chart_file(path, svg))
    return out
