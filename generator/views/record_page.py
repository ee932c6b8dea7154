"""A series page's model (`page_models.RecordPage`), from the analysis, and its cache key.

Python prepares what a page shows; the template `record.md.j2` only lays it out. Nothing here
computes a number: the comparisons, gains and open blockers come from `analysis`, the charts
that exist from `plots` (passed in as `charts`, path -> alt text).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import PurePosixPath

from generator.analysis.campaign import Analysis, Guardrail, Launch
from generator.base.problems import rel
from generator.model import variants
from generator.model.quantity import fmt_number, fmt_percent, unreplicated_text
from generator.model.record import Blocker
from generator.project.load import RecordFile
from generator.views import variants as experiments
from generator.views.evidence import record_evidence
from generator.views.forest import forest_path
from generator.views.glance import record_header
from generator.views.journal import experiments as journal_experiments
from generator.views.journal import file_links
from generator.views.page_keys import Keyed, keyed, shared_digests
from generator.views.page_models import BlockerView, PageLink, RecordPage, Rule, VariantResult
from generator.views.paths import (
    ChartLink,
    docs_root,
    record_plot_path,
    relative,
    series_dir,
    strip_path,
    variant_strip_path,
)
from generator.views.prose import figures_of
from generator.views.results import result_view, shell_command
from generator.views.road import RECONSTRUCTED, StackMark, command_caveats, stack_marks, step_lines
from generator.views.sweeps import slo_text, sweep_views


def rule(analysis: Analysis) -> Rule:
    """How comparisons are decided, as the pages state it."""
    r = analysis.rule
    return Rule(
        alpha=fmt_number(r.alpha),
        confidence=f"{fmt_number((1 - r.alpha) * 100)}%",
        equivalence=f"{fmt_number((1 - 2 * r.alpha) * 100)}%",
        min_effect=fmt_number(r.min_effect),
        primary_metric=r.primary_metric or "",
    )


def chart_link(charts: Mapping[str, str], path: str, page_dir: PurePosixPath) -> ChartLink | None:
    """The chart at `path` as an image link relative to the page, when the data allowed one."""
    if path not in charts:
        return None
    return ChartLink(src=relative(PurePosixPath(path), page_dir), alt=charts[path])


def chart_links(
    charts: Mapping[str, str], paths: list[str] | tuple[str, ...], page_dir: PurePosixPath
) -> list[ChartLink]:
    """The charts among `paths` that the data allows."""
    return [c for c in (chart_link(charts, p, page_dir) for p in paths) if c is not None]


def _command_caveats(analysis: Analysis, own_base: bool) -> list[str]:
    """The home page's caveats under the command in force, as they hold for a record's command:
    all of them, but the reconstructed baseline's for a record with a base command of its own."""
    found = command_caveats(analysis)
    return [c for c in found if not (own_base and c.startswith(RECONSTRUCTED))]


class RecordPages:
    """The series pages' models of one analysis; what every page shares is found once.

    `keyed(rec)` is a page's model and the digest of it, the page cache's key: a page is
    rendered again exactly when something it shows changed (see `page_models`).

    `views.page_reuse` builds these pages, and then each model, through views of the analysis,
    the charts and the stack's marks (`marks`, found once from the analysis when not given) that
    note each key asked (`seen_by`).
    """

    def __init__(
        self, analysis: Analysis, charts: Mapping[str, str], marks: Mapping[str, StackMark] | None = None
    ) -> None:
        project = analysis.project
        self.analysis, self.charts = analysis, charts
        self.here = series_dir(project)
        root_dir = docs_root(project)
        self.home_link = relative(root_dir / "index.md", self.here)
        self.summary_link = relative(root_dir / "summary.md", self.here)
        self.blockers_link = relative(root_dir / "blockers.md", self.here)
        self.rule = rule(analysis)
        self.slo = slo_text(project)
        self.vocabulary = project.campaign.vocabulary()
        self.marks: Mapping[str, StackMark] = stack_marks(analysis) if marks is None else marks
        # Every page holds the campaign: its digest is taken once (it stays alive in the analysis).
        self.shared = shared_digests(project.campaign)

    def seen_by(self, analysis: Analysis, charts: Mapping[str, str], marks: Mapping[str, StackMark]) -> RecordPages:
        """These pages with their models read from other views of the same analysis, charts and marks."""
        other = copy.copy(self)
        other.analysis, other.charts, other.marks = analysis, charts, marks
        return other

    def keyed(self, rec: RecordFile) -> Keyed[RecordPage]:
        return keyed(self.model(rec), self.fill, self.shared)

    def fill(self, reference: str) -> str | None:
        """A quoted figure's text as the prose filters fill it (None where it names nothing),
        read through this object's analysis, so that a recording view notes the read."""
        return figures_of(self.analysis)(reference)

    def link(self, slug: str) -> PageLink:
        target = self.analysis.by_slug[slug]
        return PageLink(slug=slug, title=record_title(target), link=self.analysis.project.output_name(target))

    def model(self, rec: RecordFile) -> RecordPage:
        """A series page's model; `charts` maps each chart drawn to its alt text."""
        analysis, charts, here = self.analysis, self.charts, self.here
        project, r, ra = analysis.project, rec.record, analysis.record(rec)
        by_slug = analysis.by_slug
        campaign = project.campaign
        change = variants.effective_change(r)
        # The command and environment as measured, what it builds on first: the analysis' Launch.
        launch = ra.launch
        tokens, env = (list(launch.tokens), dict(launch.env)) if launch is not None else ([], {})
        return RecordPage(
            campaign=campaign,
            record=r,
            number=f"{rec.number:02d}",
            slug=rec.slug,
            page_id=f"{campaign.series}-{rec.number:02d}",
            source=rel(rec.path, project.root),
            tier_text=campaign.tiers[r.tier],
            engine_version=campaign.engine.version or "not recorded",
            command="\n".join([*step_lines(*_steps(launch)), shell_command(tokens, env)]),
            image=launch.image if launch is not None and launch.image else campaign.engine.image,
            own_base_command=bool(change and change.base_command),
            launch_change=change,
            launch_setup=variants.effective_setup(r),
            variants=experiments.variant_table(analysis, rec),
            sweep_chart=chart_links(charts, [experiments.sweep_path(project, rec)], here),
            blockers=_blocker_views(analysis, rec, self.blockers_link),
            results=[
                result_view(res, chart_link(charts, strip_path(project, rec, i), here), self.vocabulary)
                for i, res in enumerate(ra.results)
            ],
            variant_results=self._variant_results(rec),
            evidence=record_evidence(analysis, rec),
            result_order=_result_order(analysis, rec),
            fold_results=len(ra.results) > 2,
            plots=chart_links(charts, [record_plot_path(project, rec), forest_path(project, rec)], here),
            sweeps=sweep_views(analysis, rec, charts),
            slo=self.slo,
            related=[self.link(s) for s in r.related if s in by_slug],
            superseded_by=self.link(r.superseded_by) if r.superseded_by and r.superseded_by in by_slug else None,
            superseding=[self.link(o.slug) for o in analysis.blockers.superseding.get(rec.slug, ())],
            builds_on=[self.link(s) for s in r.builds_on if s in by_slug],
            in_stack=self.marks.get(rec.slug),
            header=record_header(analysis, rec),
            primary_text=primary_text(analysis, rec),
            reading=reading_text(analysis, rec),
            **vars(self.rule),
            home_link=self.home_link,
            summary_link=self.summary_link,
            blockers_link=self.blockers_link,
            experiments=journal_experiments(analysis, ra, charts, here),
            file_links=file_links(analysis, rec, here),
            command_caveats=_command_caveats(analysis, bool(change and change.base_command)),
        )

    def _variant_results(self, rec: RecordFile) -> list[VariantResult]:
        """Each variant's measured results with their decision, p, test and strip chart."""
        project = self.analysis.project
        out: list[VariantResult] = []
        for j, (v, rs) in enumerate(zip(rec.record.variants, self.analysis.record(rec).variant_results, strict=True)):
            for i, res in enumerate(rs):
                if not res.metrics:
                    continue
                strip = chart_link(self.charts, variant_strip_path(project, rec, j, i), self.here)
                out.append(VariantResult(variant=v.label, view=result_view(res, strip, self.vocabulary)))
        return out


def blocker_anchor(rec: RecordFile, index: int, blocker: Blocker) -> str:
    # Slugs never hold "--", so an unnamed blocker's anchor cannot collide with a named one.
    return f"blocker-{blocker.id}" if blocker.id else f"blocker-{rec.slug}--{index + 1}"


def record_title(rec: RecordFile) -> str:
    return f"{rec.number:02d}. {rec.record.title}"


def _blocker_views(analysis: Analysis, rec: RecordFile, blockers_page: str) -> list[BlockerView]:
    """A record's blockers as its page shows them: a `ref` shows the shared definition."""
    project = analysis.project
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
                    defined_in=record_title(defining),
                    defined_link=f"{project.output_name(defining)}#{blocker_anchor(defining, k, definition)}",
                    blockers_link=f"{blockers_page}#{blocker_anchor(defining, k, definition)}",
                    note=b.note,
                    attempts=list(b.attempts),
                )
            )
        else:
            anchor = blocker_anchor(rec, j, b)
            blockers.append(
                BlockerView(
                    anchor=anchor,
                    blocker=b,
                    ref=None,
                    blockers_link=f"{blockers_page}#{anchor}",
                    note=b.note,
                    attempts=list(b.attempts),
                )
            )
    return blockers


def _steps(launch: Launch | None) -> tuple[tuple[tuple[str, str], ...], ...]:
    return (launch.before, launch.inside, launch.container) if launch is not None else ((), (), ())


def _result_order(analysis: Analysis, rec: RecordFile) -> list[int]:
    ra = analysis.record(rec)
    first = ra.primary.label if ra.primary is not None and ra.primary.kind == "metric" else None
    return sorted(range(len(ra.results)), key=lambda i: ra.results[i].result.label != first)


def reading_text(analysis: Analysis, rec: RecordFile) -> list[str]:
    """The multiplicity of a record's decisions, and why a sequential result has no Holm step (issue 50)."""
    m = analysis.record(rec).multiplicity
    if m is None:
        return []
    alpha = fmt_number(analysis.rule.alpha)
    out = [
        f"Each metric is decided on its own at alpha {alpha}, with no correction across metrics: a result "
        f"here decides up to {m.metrics} metrics, so a change that moved none of them reads `better` or "
        f"`worse` on at least one with a chance of up to {m.family_percent:.0f}% "
        f"(1 − (1 − alpha)^{m.metrics}, less when the metrics move together); the record's decision reads "
        "its primary metric alone, at alpha."
    ]
    if m.sequential:
        out.append(
            "Holm's correction does not apply to a sequential result: it steps down the p-values of "
            "fixed-n tests, and a confidence sequence has none (its interval holds at every look, "
            "whatever the stopping); each arm's decision keeps its own error rate of at most alpha, and "
            "nothing here corrects for picking one arm among several."
        )
    return out


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
    # Held readings elsewhere only: one not shown is said once, below, with where it was read
    # (a reported guardrail change was listed twice, issue 51).
    elsewhere = [g for g in primary.guardrails if g.held is True and g.result not in (None, primary.label)]
    if elsewhere:
        text += "; guardrails read in the record's other results: " + ", ".join(
            f"{g.metric} in `{g.result}` held" for g in elsewhere
        )
    unshown = primary.unshown_guardrails
    if unshown:
        text += "; guardrail not shown either way: " + ", ".join(
            f"{g.metric} (margin {fmt_number(g.margin)}%, change "
            f"{fmt_percent(g.change_percent) if g.change_percent is not None else 'not measured'}"
            + (
                f", {fmt_percent(g.ci_low_percent)} to {fmt_percent(g.ci_high_percent)}"
                if g.ci_low_percent is not None and g.ci_high_percent is not None
                # A reported change is not a single shot: it has no interval because it was
                # reported, not because it was measured once.
                else (", no interval" if g.reported else ", a single shot: no breach could have shown")
            )
            + _breach_text(g)
            + f"{_guardrail_where(g, primary.label)})"
            for g in unshown
        )
        text += ": neither held nor broken, so it does not rank it with `worse`"
    return text


def _breach_text(g: Guardrail) -> str:
    """The smallest breach the data could have shown, beside a guardrail that shows none."""
    if g.smallest_breach is None:
        return ""
    return f"; at this spread only a change beyond {fmt_percent(g.smallest_breach)} could have shown it broken"


def _guardrail_where(g: Guardrail, primary_label: str) -> str:
    """Where a guardrail reading comes from, when not the primary comparison's own result."""
    where = f", in `{g.result}`" if g.result is not None and g.result != primary_label else ""
    return where + (", as reported" if g.reported else "")
