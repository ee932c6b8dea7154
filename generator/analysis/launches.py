"""A record's launch command: the campaign baseline's, what it builds on, then its own change.

The analysis gives each record its `Launch`; `improvements run` starts exactly these commands
(`runner/arms.py`), so both read them from here.
"""

from __future__ import annotations

from collections.abc import Mapping

from generator.analysis.records import Launch
from generator.model import variants
from generator.model.launch import Cycle, Step, apply_ordered, split_command
from generator.model.launch import chain as launch_chain
from generator.model.record import Change, Setup, apply_change
from generator.project.load import Project, RecordFile


def launch_steps(project: Project) -> dict[str, Step]:
    """Every record's step, by slug (the first record of a slug when two share it)."""
    first: dict[str, Step] = {}
    for r in project.records:
        first.setdefault(
            r.slug, Step.from_change(r.slug, r.number, r.record.builds_on, variants.effective_change(r.record))
        )
    return first


def record_launch(project: Project, rec: RecordFile, steps: Mapping[str, Step]) -> Launch:
    """The record's launch command as measured: what it builds on applied first, then its change."""
    record = rec.record
    return launch_of(project, rec, steps, variants.effective_change(record), variants.effective_setup(record))


def launch_of(
    project: Project, rec: RecordFile, steps: Mapping[str, Step], change: Change | None, setup: Setup | None
) -> Launch:
    """The launch command of `rec` made with `change` on `setup`: a variant's arm, or the record's own.

    What it builds on is applied first, as in the stack; `improvements run` starts exactly this.
    """
    campaign = project.campaign
    base = setup.base_command if setup is not None and setup.base_command else campaign.baseline.command
    tokens, env = apply_change(base, change), {**campaign.baseline.env, **(change.env if change else {})}
    # The host commands its launch needs first: those of what it builds on, then its own (they
    # depend on the steps alone, so the stack that gives the command gives them too).
    chain: tuple[RecordFile, ...] = ()
    own = Step.from_change(rec.slug, rec.number, rec.record.builds_on, change)
    # Only a variant's arm differs from the record's own step; copying the table for every record
    # would make a campaign's analysis quadratic.
    picked = launch_chain(rec.slug, steps if steps.get(rec.slug) == own else {**steps, rec.slug: own})
    before: tuple[tuple[str, str], ...] = ()
    inside: tuple[tuple[str, str], ...] = ()
    container = tuple((own.label, line) for line in own.container)
    image = change.image if change is not None else None
    if not isinstance(picked, Cycle):
        # Without `builds_on` only the host commands are wanted: no baseline command to split.
        stacked = bool(rec.record.builds_on)
        found = apply_ordered(
            campaign.baseline.command if stacked else "", campaign.baseline.env if stacked else {}, picked
        )
        before, inside, container = found.before, found.inside, found.container
        image = found.image[1] if found.image is not None else None
        if stacked:
            by_slug = project.slug_index
            tokens, env = list(found.tokens), dict(found.env)
            chain = tuple(by_slug[s.slug] for s in picked if s.slug != rec.slug and s.slug in by_slug)
    return Launch(tuple(tokens), env, chain, before, inside, image, container)


def launch_below(project: Project, rec: RecordFile, steps: Mapping[str, Step]) -> Launch:
    """What `rec` is compared against: the campaign baseline (on the record's own setup's base
    command, when it has one), or with `builds_on`, the stack of what it builds on."""
    campaign = project.campaign
    setup = variants.effective_setup(rec.record)
    base = setup.base_command if setup is not None and setup.base_command else campaign.baseline.command
    picked = launch_chain(rec.slug, steps)
    if not rec.record.builds_on or isinstance(picked, Cycle):
        return Launch(tuple(split_command(base)), dict(campaign.baseline.env))
    below = tuple(s for s in picked if s.slug != rec.slug)
    found = apply_ordered(campaign.baseline.command, campaign.baseline.env, below)
    by_slug = project.slug_index
    chain = tuple(by_slug[s.slug] for s in below if s.slug in by_slug)
    return Launch(found.tokens, dict(found.env), chain, found.before, found.inside, container=found.container)
