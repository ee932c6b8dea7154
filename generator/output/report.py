"""`improvements report`: the whole campaign as one markdown document, to paste into a pull request.

One file that reads on its own, with no links into the site: the campaign in a paragraph,
the ranked summary, the stack, and each record condensed (status, hypothesis, change, each
result's numbers with their change, open blockers, verdict). Everything comes from the
analysis and the page views the site uses, through the same template environment, so the
report and the pages agree on every number and sign.
"""

from __future__ import annotations

from typing import Any

import jinja2
from markupsafe import Markup

from generator.analysis.campaign import Analysis
from generator.base.problems import ProblemsFound, Report
from generator.model.launch import assignment, words
from generator.model.record import Change
from generator.output.render import with_figures
from generator.output.templates import environment, template_problem
from generator.views import road
from generator.views.evidence import record_evidence
from generator.views.markdown import TemplateFailure, code, inline
from generator.views.prose import filled
from generator.views.results import result_view
from generator.views.summary import blockers_text, gain_text, status_text, summary_rows, tier_text

TEMPLATE = "report.md.j2"
# Metrics per result in the report: the headline ones (throughputs come first in a run's order).
SHOWN_METRICS = 4


def _stack(analysis: Analysis) -> dict[str, Any]:
    """The stack as the report shows it: the launch command in force, the steps before it as
    `stack` prints them (`inside:` ones as comments), and what to know before running it."""
    found = analysis.stack
    return {
        "command": "\n".join(
            [*road.step_lines(found.stack.before, found.stack.inside, found.stack.container), found.stack.command]
        )
        if found.stack is not None
        else None,
        "image": road.image_in_force(analysis)[1] if found.stack is not None else None,
        "caveats": road.command_caveats(analysis),
        "records": [f"{rec.number:02d}. {rec.record.title}" for rec in found.records],
        "notes": [f"{label}: {what}" for label, what in found.notes],
    }


def _change_line(analysis: Analysis, change: Change | None) -> Markup:
    """A record's change on one line (flags; removed flags; environment; each patch), built of
    parts already escaped, so the template prints it as it is and nothing is escaped twice."""
    if change is None:
        return Markup("")
    space = Markup(" ")
    parts = [
        space.join(code(words(f.tokens())) for f in change.flags),
        Markup("removed {}").format(space.join(code(f) for f in change.remove_flags)) if change.remove_flags else "",
        space.join(code(assignment(k, v)) for k, v in change.env.items()),
        *(Markup("patch: {}").format(inline(filled(p.summary, analysis))) for p in change.patches),
    ]
    return Markup("; ").join(part for part in parts if part)


def report_context(analysis: Analysis) -> dict[str, Any]:
    project = analysis.project
    campaign = project.campaign
    rows = [
        {
            **vars(row),
            "gain_text": gain_text(row),
            "blockers_text": blockers_text(row),
            "tier_text": tier_text(row),
            "status_text": status_text(row),
        }
        for row in summary_rows(analysis)
    ]
    records = []
    vocabulary = campaign.vocabulary()
    for entry in analysis.records:
        rec = entry.file
        records.append(
            {
                "number": f"{rec.number:02d}",
                "record": rec.record,
                "results": [result_view(res, vocabulary=vocabulary) for res in entry.results],
                # Each variant's results, read like the record's own.
                "variants": [
                    {
                        "label": v.label,
                        "outcome": v.outcome,
                        "results": [result_view(res, vocabulary=vocabulary) for res in results],
                    }
                    for v, results in zip(rec.record.variants, entry.variant_results, strict=True)
                ],
                "evidence": record_evidence(analysis, rec),
                "open_blockers": list(entry.open_blockers),
                "flags": [words(f.tokens()) for f in (rec.record.change.flags if rec.record.change else [])],
                "env": [assignment(k, v) for k, v in (rec.record.change.env.items() if rec.record.change else ())],
                "change": _change_line(analysis, rec.record.change),
            }
        )
    return {
        "campaign": campaign,
        "engine_version": campaign.engine.version or "not recorded",
        "rows": rows,
        "records": records,
        "stack": _stack(analysis),
        "slo": bool(campaign.slo),
        "shown": SHOWN_METRICS,
        "baseline_results": [result_view(res) for res in analysis.baseline_results],
    }


def report_text(analysis: Analysis) -> str:
    """The report's markdown; ProblemsFound when a campaign's own report template fails."""
    root = analysis.project.root
    try:
        text = with_figures(environment(root), analysis).get_template(TEMPLATE).render(report_context(analysis))
    except (jinja2.TemplateError, TemplateFailure) as exc:
        report = Report()
        report.add(template_problem(root, TEMPLATE, exc))
        raise ProblemsFound(report) from None
    # One blank line between blocks, one newline at the end, whatever the template's layout.
    lines: list[str] = []
    for line in text.splitlines():
        line = line.rstrip()
        if line or (lines and lines[-1]):
            lines.append(line)
    return "\n".join(lines).strip("\n") + "\n"
