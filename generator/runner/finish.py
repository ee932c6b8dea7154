"""After the runs: the plan's runs linked into the record, and each linked result's decision.

`improvements run` calls these once its plan has run (or a resume finished it); they read and
write only through the record, the journal and the analysis, so a resume links the same again.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from generator.runner.execute import Outcome
    from generator.runner.journal import Journal, State
    from generator.views.page_models import MetricRow

    # Each linked result's (label, metric, its row on the page), and the sequential rule's last look.
    Decided = tuple[list[tuple[str, str, MetricRow | None]], list[str]]


def resume_command(slug: str, plan_id: str, given_root: Path | None) -> str:
    """The command that links a finished plan, as one pastes it (quoted by the one quoting)."""
    from generator.model.launch import quote

    where = f" --root {quote(str(given_root))}" if given_root is not None else ""
    return f"improvements run {quote(slug)}{where} --resume --plan {quote(plan_id)}"


def link(repo: Path, slug: str, state: State, journal: Journal) -> list[str]:
    """The plan's finished runs linked into the record (found by its slug), checked as `check` would."""
    from generator.authoring.link_runs import write_all
    from generator.base.fsio import edit_lock
    from generator.base.problems import CommandError, rel
    from generator.checks.validate import require_project
    from generator.project.load import record_files
    from generator.runner import session
    from generator.runner.link import link_plan, parsed_outputs

    # The record by its slug, wherever it is now (a renumber moves its file; the plan keeps the old name).
    found = [path for path, _number, name in record_files(repo / "improvements")[0] if name == slug]
    if not found:
        raise CommandError(f"no record of `{slug}` under improvements/ to link the runs into")
    target = found[0]
    with edit_lock(repo, target):
        project = require_project(repo)
        if project.by_slug().get(slug) is None or project.by_slug()[slug].path != target:
            raise CommandError(f"the record of `{slug}` was moved while its runs were being linked")
        runs = parsed_outputs(repo, state, session.parser(project, state.plan.settings.format))
        text, labels, used = link_plan(project, target, state.plan, state, runs, journal.path)
        parsed = [p for files in runs.values() for p in files if all(r.id in used for r in p.runs)]
        if parsed:
            session.check_edit(project, target, text, [r for p in parsed for r in p.runs])
            write_all(repo, target, text, parsed)
    journal.append("linked", record=rel(target, repo), results=labels)
    return labels


def decide(repo: Path, slug: str, labels: list[str], outcome: Outcome) -> Decided:
    """Each linked result's row on the primary metric, as the record's page shows it, and the
    sequential rule's last look."""
    from generator.analysis.campaign import analyse
    from generator.checks.validate import require_project
    from generator.views.results import result_view

    analysis = analyse(require_project(repo))
    rec = next(r for r in analysis.project.records if r.slug == slug)
    ra = analysis.record(rec)
    metric = ra.primary_metric
    vocabulary = analysis.project.campaign.vocabulary()
    rows: list[tuple[str, str, MetricRow | None]] = []
    for resolved in list(ra.results) + [r for group in ra.variant_results for r in group]:
        if resolved.result.label not in labels:
            continue
        # The row the record's page shows, as it shows it: the analysis' numbers, the page's words.
        row = next((r for r in result_view(resolved, vocabulary=vocabulary).rows if r.name == metric), None)
        found = row if row is not None and row.comparison is not None else None
        rows.append((resolved.result.label, metric or "no primary metric", found))
    looks = [
        f"sequential ({outcome.stopped}): {arm}: {data['call']} after {data['blocks']} blocks"
        for look in outcome.looks[-1:]
        for arm, data in look.items()
    ]
    return rows, looks
