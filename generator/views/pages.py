"""What each page shows: the views of the series pages, the home page, the summary and the blockers.

Python prepares what a page shows, from the analysis; the Jinja2 templates only lay it
out. Nothing here computes a number: the deltas, gains and open blockers come from
`analysis`, the charts that exist from `plots` (passed in as `charts`, path -> alt text).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from generator.analysis.campaign import Analysis, Guardrail, Launch, ResolvedResult
from generator.analysis.figures import quoted_records
from generator.analysis.stats import POWER, REPS_CAP, Comparison
from generator.base.problems import rel
from generator.model import metrics, variants
from generator.model.launch import assignment, env_prefix, quote
from generator.model.quantity import Value, fmt_number, fmt_percent, fmt_summarised, unreplicated_text
from generator.model.record import Attempt, Blocker
from generator.model.reported import ReportedMetric, changes, figures
from generator.model.result import Result
from generator.project.load import RecordFile
from generator.views import variants as experiments
from generator.views.design import design_lines
from generator.views.evidence import baseline_evidence, record_evidence
from generator.views.frontier import frontier_view
from generator.views.glance import decision, home_glance, record_day, record_header
from generator.views.paths import (
    docs_root,
    record_plot_path,
    relative,
    series_dir,
    strip_path,
    summary_plot_paths,
    variant_strip_path,
)
from generator.views.road import level_text, road_context, stack_mark, stack_marks, step_lines
from generator.views.summary import blockers_text, gain_text, status_text, summary_rows, tier_text
from generator.views.sweeps import slo_text, sweep_views


def shell_command(tokens: list[str], env: dict[str, str]) -> str:
    """A launch command a shell accepts, one option per line, env vars as a prefix."""
    # The one quoting of everything printed for a shell (`launch.quote`), as `stack` prints it.
    lines: list[list[str]] = [[*env_prefix(env), *(assignment(k, v) for k, v in env.items())]]
    started = False
    for token in tokens:
        if token.startswith("--") and started:
            lines.append([])
        started = True
        lines[-1].append(quote(token))
    return " \\\n    ".join(" ".join(line) for line in lines)


@dataclass
class MetricRow:
    name: str
    label: str
    unit: str
    higher_is_better: bool
    value: str
    baseline: str | None
    comparison: Comparison | None
    # The comparison as the table shows it; None when not compared.
    change: str | None
    interval: str | None
    n: str | None
    test: str | None
    decision: str | None
    # The decision's word alone (`better`, `no-change`, ...), for the column that leads the row.
    word: str | None
    # For an inconclusive comparison: how many repetitions per side would settle it.
    would_take: str | None
    # Ten repetitions or fewer: the values themselves (and a flagged spread).
    listed: str | None = None
    # The arithmetic means' change, where it differs as printed from the point (labelled on the page).
    arithmetic: str | None = None


@dataclass
class ResultView:
    result: Result
    rows: list[MetricRow]
    notes: list[str]
    no_baseline: bool
    concurrency: str
    request_rate: str | None
    # Evidence as the source reported it, labelled from the metric vocabulary; never compared.
    reported: list[ReportedMetric] = field(default_factory=list)
    reported_changes: list[ReportedMetric] = field(default_factory=list)
    # The result's strip chart (path relative to the page, alt text), when it has one.
    strip: dict[str, str] | None = None
    # How its runs were made (views.design): start times, blocks, trends, launches; markdown.
    design: list[str] = field(default_factory=list)


_TESTS = {
    "welch": "Welch's t",
    "paired": "paired t",
    "delta": "delta method on the means",
    "sequence": "paired t confidence sequence",
}


def _test_text(c: Comparison) -> str | None:
    if not c.test:
        return None
    return _TESTS[c.test] + (", log scale" if c.scale == "ratio" else "")


def _change(c: Comparison, unit: str) -> tuple[str, str | None]:
    """(change, interval) as shown: in percent of the baseline mean, or in the unit when it is 0."""
    if c.change_percent is None:
        sign = "+" if c.difference > 0 else ""
        change = f"{sign}{fmt_number(c.difference)} {unit} (baseline mean 0, no percent)"
        if c.ci_low is None or c.ci_high is None:
            return change, None
        return change, f"{fmt_number(c.ci_low)} to {fmt_number(c.ci_high)} {unit}"
    if c.ci_low_percent is None or c.ci_high_percent is None:
        return fmt_percent(c.change_percent), None
    return fmt_percent(c.change_percent), f"{fmt_percent(c.ci_low_percent)} to {fmt_percent(c.ci_high_percent)}"


def _arithmetic(c: Comparison) -> str | None:
    """The arithmetic means' change, shown labelled beside the means where it differs as printed
    from the point (the geometric means' ratio, the estimate the interval is built on)."""
    if c.arith_change_percent is None or c.change_percent is None:
        return None
    arith = fmt_percent(c.arith_change_percent)
    return None if arith == fmt_percent(c.change_percent) else arith


def _decision_text(c: Comparison) -> str:
    if c.decision == "unreplicated":
        return unreplicated_text(c.n, c.baseline_n, c.spread_unknown, advice=False)
    if c.test == "sequence":
        return f"{c.decision} (sequential: an interval valid at every look)"
    within = f"; within min_effect ±{fmt_number(c.min_effect)}%" if c.within_min_effect else ""
    if c.p_value is None:
        return f"{c.decision} (no spread, no p{within})"
    return f"{c.decision} (p = {c.p_value:.2g}{within})"


def _would_take(c: Comparison) -> str | None:
    """The repetitions per side that would give the rule an 80% chance of settling it (from the analysis)."""
    if c.decision != "inconclusive" or c.reps_target is None:
        return None
    chance = f"an {POWER:.0%} chance that the rule says `{c.reps_target}`"
    seen = fmt_percent(c.change_percent) if c.change_percent is not None else "the change"
    if c.reps_over_cap:
        text = f"more than {REPS_CAP:,} repetitions per side for {chance} if the true change is the {seen} seen here"
    elif c.reps_needed is None:
        return None
    else:
        text = f"about {c.reps_needed} repetitions per side for {chance} if the true change is the {seen} seen here"
    if c.reps_needed_min_effect is not None:
        text += f"; {c.reps_needed_min_effect} for `better` if it is {fmt_number(c.min_effect)}% (min_effect)"
    elif c.min_effect > 0:
        text += f"; more than {REPS_CAP:,} for `better` if it is {fmt_number(c.min_effect)}% (min_effect)"
    text += f", at the spread seen and alpha {fmt_number(c.alpha)}"
    if c.reps_rough:
        text += " (rough: the spread comes from 2 repetitions)"
    return text


def _listed(value: Value, base: Value | None, c: Comparison | None) -> str | None:
    """The values of a comparison of ten repetitions or fewer, and a spread beyond one configuration."""
    if c is None or c.n < 2 or max(c.n, c.baseline_n) > 10 or not isinstance(value, list):
        return None
    text = ", ".join(fmt_number(v) for v in value)
    if isinstance(base, list) and len(base) >= 2:
        text += " against " + ", ".join(fmt_number(v) for v in base)
    if c.spread_flag:
        text += f" (flagged: {c.spread_flag}, more than one configuration plausibly gives)"
    return text


def _metric_row(resolved: ResolvedResult, name: str, vocabulary: metrics.Vocabulary) -> MetricRow:
    value, base, c = resolved.metrics[name], resolved.baseline.get(name), resolved.comparisons.get(name)
    metric = vocabulary.lookup(name)
    unit = metric.unit if metric else ""
    change, interval = _change(c, unit) if c is not None else (None, None)
    ratio = experiments.ratio_text(c) if c is not None else None
    if change is not None and ratio:
        change = f"{change}, {ratio}"
    return MetricRow(
        name=name,
        label=metric.label if metric else name,
        unit=unit,
        higher_is_better=metric.higher_is_better if metric else True,
        value=fmt_summarised(value, resolved.summaries[name]),
        baseline=fmt_summarised(base, resolved.baseline_summaries[name]) if base is not None else None,
        comparison=c,
        change=change,
        interval=interval,
        n=f"{c.n} / {c.baseline_n}" if c is not None else None,
        test=_test_text(c) if c is not None else None,
        decision=_decision_text(c) if c is not None else None,
        word=c.decision if c is not None else None,
        would_take=_would_take(c) if c is not None else None,
        listed=_listed(value, base, c),
        arithmetic=_arithmetic(c) if c is not None else None,
    )


def result_view(
    resolved: ResolvedResult,
    strip: dict[str, str] | None = None,
    vocabulary: metrics.Vocabulary = metrics.BUILTIN,
) -> ResultView:
    # An imported run fills in the load and workload it recorded.
    result = resolved.result
    rows = [_metric_row(resolved, name, vocabulary) for name in resolved.metrics]
    rate = result.request_rate
    rate_text = None
    if rate is not None:
        # Not `.get(str(rate), f"{float(rate)}...")`: the default is built first, and `trace` is not a number.
        words = {"inf": "unlimited", "trace": "trace replay"}
        rate_text = words[rate] if isinstance(rate, str) else f"{fmt_number(float(rate))} req/s"
    return ResultView(
        result=result,
        rows=rows,
        notes=list(resolved.notes),
        no_baseline=resolved.no_baseline,
        concurrency=str(result.concurrency) if result.concurrency is not None else "not recorded",
        request_rate=rate_text,
        reported=figures(result),
        reported_changes=changes(result),
        strip=strip,
        design=design_lines(resolved.design, any(c is not None for c in resolved.comparisons.values())),
    )


@dataclass
class BlockerView:
    anchor: str
    # The definition: the record's own blocker, or the shared one a `ref` points at.
    blocker: Blocker
    ref: str | None
    defined_in: str | None = None
    defined_link: str | None = None
    blockers_link: str = ""
    # This record's own note and attempts (a `ref` may carry both against a shared blocker).
    note: str | None = None
    attempts: list[Attempt] = field(default_factory=list)


def _blocker_anchor(rec: RecordFile, index: int, blocker: Blocker) -> str:
    # Slugs never hold "--", so an unnamed blocker's anchor cannot collide with a named one.
    return f"blocker-{blocker.id}" if blocker.id else f"blocker-{rec.slug}--{index + 1}"


def _record_title(rec: RecordFile) -> str:
    return f"{rec.number:02d}. {rec.record.title}"


def _blocker_views(analysis: Analysis, rec: RecordFile) -> list[BlockerView]:
    """A record's blockers as its page shows them: a `ref` shows the shared definition."""
    project = analysis.project
    here, root_dir = series_dir(project), docs_root(project)
    shared = analysis.blockers.shared
    blockers: list[BlockerView] = []
    for j, b in enumerate(rec.record.blockers):
        if b.ref is not None:
            defining, k, definition = shared[b.ref].record, shared[b.ref].index, shared[b.ref].blocker
            blockers.append(
                BlockerView(
                    anchor=f"blocker-{b.ref}",
                    blocker=definition,
                    ref=b.ref,
                    defined_in=_record_title(defining),
                    defined_link=f"{project.output_name(defining)}#{_blocker_anchor(defining, k, definition)}",
                    blockers_link=relative(root_dir / "blockers.md", here)
                    + f"#{_blocker_anchor(defining, k, definition)}",
                    note=b.note,
                    attempts=list(b.attempts),
                )
            )
        else:
            anchor = _blocker_anchor(rec, j, b)
            blockers.append(
                BlockerView(
                    anchor=anchor,
                    blocker=b,
                    ref=None,
                    blockers_link=relative(root_dir / "blockers.md", here) + f"#{anchor}",
                    note=b.note,
                    attempts=list(b.attempts),
                )
            )
    return blockers


def record_context(analysis: Analysis, rec: RecordFile, charts: Mapping[str, str]) -> dict[str, Any]:
    """A series page's view; `charts` maps each chart drawn to its alt text."""
    project = analysis.project
    r = rec.record
    here = series_dir(project)
    root_dir = docs_root(project)
    by_slug = analysis.by_slug
    campaign = project.campaign

    def page_link(slug: str) -> dict[str, str]:
        target = by_slug[slug]
        return {"slug": slug, "title": _record_title(target), "link": project.output_name(target)}

    blockers = _blocker_views(analysis, rec)
    change = variants.effective_change(r)
    # The command and environment as measured, what it builds on first: the analysis' Launch.
    launch = analysis.record(rec).launch
    tokens, env = (list(launch.tokens), dict(launch.env)) if launch is not None else ([], {})
    return {
        "campaign": campaign,
        "record": r,
        "number": f"{rec.number:02d}",
        "slug": rec.slug,
        "page_id": f"{campaign.series}-{rec.number:02d}",
        "source": rel(rec.path, project.root),
        "tier_text": campaign.tiers[r.tier],
        "engine_version": campaign.engine.version or "not recorded",
        # The steps first, as `stack` prints them (`inside:` ones as comments): the block runs as shown.
        "command": "\n".join([*step_lines(*_steps(launch)), shell_command(tokens, env)]),
        "image": launch.image if launch is not None and launch.image else campaign.engine.image,
        "own_base_command": bool(change and change.base_command),
        # With variants, the command is the retained variant's (`variants.effective_change`).
        "launch_change": change,
        # Its setup, likewise: the retained variant's own, else the record's.
        "launch_setup": variants.effective_setup(r),
        "variants": experiments.variant_table(analysis, rec),
        "sweep_chart": _plot_views(charts, [experiments.sweep_path(project, rec)], here),
        "blockers": blockers,
        "results": [
            result_view(res, _strip_view(charts, strip_path(project, rec, i), here), campaign.vocabulary())
            for i, res in enumerate(analysis.record(rec).results)
        ],
        "variant_results": _variant_result_views(analysis, rec, charts),
        "evidence": record_evidence(analysis, rec),
        # The primary comparison's result first; with more than two results the others are
        # folded (details), each summary naming its decision on the primary metric.
        "result_order": _result_order(analysis, rec),
        "fold_results": len(analysis.record(rec).results) > 2,
        "plots": _plot_views(charts, [record_plot_path(project, rec)], here),
        "sweeps": sweep_views(analysis, rec, charts),
        "slo": slo_text(project),
        "related": [page_link(s) for s in r.related if s in by_slug],
        "superseded_by": page_link(r.superseded_by) if r.superseded_by and r.superseded_by in by_slug else None,
        "superseding": [page_link(o.slug) for o in analysis.blockers.superseding.get(rec.slug, ())],
        "builds_on": [page_link(s) for s in r.builds_on if s in by_slug],
        "in_stack": stack_mark(analysis, rec),
        "header": record_header(analysis, rec),
        "primary_text": primary_text(analysis, rec),
        **_rule_context(analysis),
        "home_link": relative(root_dir / "index.md", here),
        "summary_link": relative(root_dir / "summary.md", here),
        "blockers_link": relative(root_dir / "blockers.md", here),
    }


def _steps(launch: Launch | None) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
    return (launch.before, launch.inside) if launch is not None else ((), ())


def _variant_result_views(analysis: Analysis, rec: RecordFile, charts: Mapping[str, str]) -> list[dict[str, Any]]:
    """Each variant's measured results with their decision, p, test and strip chart."""
    project, here = analysis.project, series_dir(analysis.project)
    vocabulary = project.campaign.vocabulary()
    out: list[dict[str, Any]] = []
    for j, (v, rs) in enumerate(zip(rec.record.variants, analysis.record(rec).variant_results, strict=True)):
        for i, res in enumerate(rs):
            if not res.metrics:
                continue
            strip = _strip_view(charts, variant_strip_path(project, rec, j, i), here)
            out.append({"variant": v.label, "view": result_view(res, strip, vocabulary)})
    return out


def _result_order(analysis: Analysis, rec: RecordFile) -> list[int]:
    ra = analysis.record(rec)
    first = ra.primary.label if ra.primary is not None and ra.primary.kind == "metric" else None
    return sorted(range(len(ra.results)), key=lambda i: ra.results[i].result.label != first)


def record_dependencies(analysis: Analysis, rec: RecordFile) -> list[RecordFile]:
    """The other records a record's page shows something of; keep in step with `record_context`.

    A rebuild reuses a page only while its own file, these records' files, the campaign file
    and `record_derived` are unchanged (see `render._PageCache`).
    """
    index, by_slug = analysis.blockers, analysis.by_slug
    r = rec.record
    slugs = [*r.related, *([r.superseded_by] if r.superseded_by else [])]
    out = [by_slug[s] for s in slugs if s in by_slug]
    out += [index.shared[b.ref].record for b in r.blockers if b.ref and b.ref in index.shared]
    out += index.superseding.get(rec.slug, ())
    # What it builds on and its baselines (its place in the stack is `record_derived`'s).
    refs = [
        res.baseline_from.record for res in variants.all_results(r) if res.baseline_from and res.baseline_from.record
    ]
    out += [by_slug[s] for s in refs if s in by_slug]
    launch = analysis.record(rec).launch
    out += launch.chain if launch is not None else ()
    # The records whose numbers its prose quotes (`{{ record.result.metric.field }}`).
    out += quoted_records(analysis, rec)
    return out


def record_derived(analysis: Analysis) -> Mapping[str, object]:
    """What each record's page shows of the whole campaign beyond the files `record_dependencies` names, by slug.

    An adopted record's place in the stack (the numbers and slugs of the adopted records before
    it, `stack_mark`): keyed by the place itself rather than by every adopted record's file, so
    that editing one adopted record's text does not re-render every other adopted record's page.
    A record missing here shows nothing of the kind. Its date from git, when it has none of its
    own (`record_day`): a commit, not an edit, gives it.
    """
    marks: dict[str, object] = dict(stack_marks(analysis))
    for rec in analysis.project.records:
        if rec.record.date is None:
            marks[rec.slug] = (marks.get(rec.slug), record_day(analysis.project, rec))
    return marks


def primary_text(analysis: Analysis, rec: RecordFile) -> str | None:
    """The comparison that ranks the record, in one sentence: which, why, and what limits it."""
    primary = analysis.record(rec).primary
    if primary is None:
        return None
    c = primary.comparison
    change = fmt_percent(c.change_percent) if c.change_percent is not None else "no percent (baseline mean 0)"
    interval = ""
    if c.ci_low_percent is not None and c.ci_high_percent is not None:
        interval = f" (interval {fmt_percent(c.ci_low_percent)} to {fmt_percent(c.ci_high_percent)})"
    word = unreplicated_text(c.n, c.baseline_n, c.spread_unknown) if c.decision == "unreplicated" else c.decision
    text = f"{primary.metric} in `{primary.label}`, {primary.chosen}: {change}{interval}, {word}"
    if primary.best_of is not None and primary.holm_p is not None:
        tested = primary.best_of_tested
        with_p = f" ({tested} with a p-value)" if tested is not None and tested < primary.best_of else ""
        text += f"; best of {primary.best_of} variants{with_p}, Holm-adjusted p = {primary.holm_p:.2g}"
        if c.interval_alpha is not None:
            text += (
                f" (the interval is Holm's step's, {fmt_number(100 - 100 * c.interval_alpha)}%: "
                "the one that goes with the corrected word)"
            )
    broken = primary.broken_guardrails
    if broken:
        text += "; guardrail broken: " + ", ".join(
            f"{g.metric} (margin {fmt_number(g.margin)}%, change "
            f"{fmt_percent(g.change_percent) if g.change_percent is not None else 'not measured'}"
            f"{_guardrail_where(g, primary.label)})"
            for g in broken
        )
        text += ", so it does not count as a win"
    elsewhere = [g for g in primary.guardrails if g.held is not False and g.result not in (None, primary.label)]
    if elsewhere:
        text += "; guardrails read in the record's other results: " + ", ".join(
            f"{g.metric} in `{g.result}` {'held' if g.held else 'not shown within the margin'}" for g in elsewhere
        )
    unshown = primary.unshown_guardrails
    if unshown:
        text += "; guardrail not shown either way: " + ", ".join(
            f"{g.metric} (margin {fmt_number(g.margin)}%, change "
            f"{fmt_percent(g.change_percent) if g.change_percent is not None else 'not measured'}"
            + (
                f", {fmt_percent(g.ci_low_percent)} to {fmt_percent(g.ci_high_percent)})"
                if g.ci_low_percent is not None and g.ci_high_percent is not None
                else ", a single shot)"
            )
            for g in unshown
        )
        text += ": neither held nor broken, so it does not rank it with `worse`"
    return text


def _guardrail_where(g: Guardrail, primary_label: str) -> str:
    """Where a guardrail reading comes from, when not the primary comparison's own result."""
    where = f", in `{g.result}`" if g.result is not None and g.result != primary_label else ""
    return where + (", as reported" if g.reported else "")


def home_context(analysis: Analysis, charts: Mapping[str, str] | None = None) -> dict[str, Any]:
    project = analysis.project
    campaign = project.campaign
    root_dir = docs_root(project)
    goals = []
    vocabulary = campaign.vocabulary()
    # One current level per goal, the analysis' (the road's for a goal on the road).
    for status in analysis.goals:
        g = status.goal
        metric = vocabulary.lookup(g.metric)
        goals.append(
            {
                "goal": g,
                "label": metric.label if metric else g.metric,
                "unit": metric.unit if metric else "",
                "direction": status.direction,
                "target": fmt_number(g.target),
                "current": None
                if status.current is None
                else ("~" if status.about else "") + level_text(status.current),
                "current_from": status.current_from,
                "concurrency": str(g.concurrency) if g.concurrency is not None else "not recorded",
                "reached": status.reached,
            }
        )
    counts = {t: sum(1 for r in project.records if r.record.tier == t) for t in (1, 2, 3)}
    # Per tier, the records placed there by themselves rather than by their sources.
    own = {
        t: [f"{r.number:02d}" for r in project.records if (r.record.tier, r.record.tier_source) == (t, "own")]
        for t in (1, 2, 3)
    }
    return {
        "campaign": campaign,
        "engine_version": campaign.engine.version or "not recorded",
        "command": shell_command(shlex.split(campaign.baseline.command), dict(campaign.baseline.env)),
        "baseline_results": [result_view(res, vocabulary=campaign.vocabulary()) for res in analysis.baseline_results],
        "baseline_evidence": baseline_evidence(analysis),
        "tier_counts": counts,
        "tier_own": own,
        "record_count": len(project.records),
        "summary_link": relative(root_dir / "summary.md", root_dir),
        "blockers_link": relative(root_dir / "blockers.md", root_dir),
        "road": road_context(analysis, dict(charts or {})),
        "glance": home_glance(analysis),
        "timeline_link": "timeline.md",
        "frontier": frontier_view(analysis, dict(charts or {}), root_dir),
    }


def summary_context(analysis: Analysis, charts: Mapping[str, str]) -> dict[str, Any]:
    project = analysis.project
    root_dir = docs_root(project)
    rows = []
    by_slug = analysis.by_slug
    for row in summary_rows(analysis):
        rec = by_slug[row["slug"]]
        rows.append(
            {
                **row,
                "decision": decision(
                    analysis.record(rec).primary, project.campaign.vocabulary(), analysis.record(rec).regressions
                ),
                "date": record_day(project, rec),
                "link": relative(series_dir(project) / project.output_name(rec), root_dir),
                "gain_text": gain_text(row),
                "status_text": status_text(row),
                "blockers_text": blockers_text(row),
                "tier_text": tier_text(row),
            }
        )
    # The frontier has its own section (`frontier`), with its table.
    views = _plot_views(charts, summary_plot_paths(project)[:1], root_dir)
    return {
        "campaign": project.campaign,
        "rows": rows,
        "plots": views,
        "frontier": frontier_view(analysis, dict(charts), root_dir),
        "own_placement": any(row["tier_source"] == "own" for row in rows),
        "ranked_metrics": list(analysis.ranked_metrics),
        "ranked_loads": list(analysis.ranked_loads),
        **_rule_context(analysis),
    }


def _rule_context(analysis: Analysis) -> dict[str, str]:
    """How comparisons are decided, as the pages state it."""
    r = analysis.rule
    return {
        "alpha": fmt_number(r.alpha),
        "confidence": f"{fmt_number((1 - r.alpha) * 100)}%",
        "equivalence": f"{fmt_number((1 - 2 * r.alpha) * 100)}%",
        "min_effect": fmt_number(r.min_effect),
        "primary_metric": r.primary_metric or "",
    }


def _strip_view(charts: Mapping[str, str], path: str, page_dir: PurePosixPath) -> dict[str, str] | None:
    if path not in charts:
        return None
    return {"src": relative(PurePosixPath(path), page_dir), "alt": charts[path]}


def _plot_views(
    charts: Mapping[str, str], paths: list[str] | tuple[str, ...], page_dir: PurePosixPath
) -> list[dict[str, str]]:
    """The charts among `paths` that the data allows, as image links relative to the page."""
    return [{"src": relative(PurePosixPath(path), page_dir), "alt": charts[path]} for path in paths if path in charts]


def blockers_context(analysis: Analysis) -> dict[str, Any]:
    project = analysis.project
    root_dir = docs_root(project)
    here = series_dir(project)
    entries = []
    for rec in project.records:
        for j, b in enumerate(rec.record.blockers):
            if b.ref is not None:
                continue
            anchor = _blocker_anchor(rec, j, b)
            # The defining record and every record that points at it, each once, in series order.
            affects: list[tuple[RecordFile, Blocker]] = [(rec, b)]
            seen = {id(rec)}
            for other, ref in analysis.blockers.refs.get(b.id or "", ()):
                if id(other) not in seen:
                    seen.add(id(other))
                    affects.append((other, ref))
            affects.sort(key=lambda pair: pair[0].number)
            entries.append(
                {
                    "anchor": anchor,
                    "blocker": b,
                    "record": _record_title(rec),
                    "record_link": relative(here / project.output_name(rec), root_dir) + f"#{anchor}",
                    "affects": [
                        {
                            "title": _record_title(o),
                            "link": relative(here / project.output_name(o), root_dir),
                            "status": o.record.status,
                            "attempts": list(entry.attempts),
                            "note": entry.note if entry is not b else None,
                        }
                        for o, entry in affects
                    ],
                }
            )
    return {"campaign": project.campaign, "entries": entries}
