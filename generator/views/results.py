"""A result's view (its metrics table as the pages show it) and a launch command as a shell takes it.

Nothing here computes a number: the comparisons are the analysis' (`ResolvedResult`); this
formats them for the pages (`page_models.ResultView`), the home page's and the report's too.
"""

from __future__ import annotations

from generator.analysis.campaign import ResolvedResult
from generator.analysis.stats import POWER, REPS_CAP, Comparison
from generator.model import metrics
from generator.model.launch import assignment, env_prefix, quote
from generator.model.quantity import Value, fmt_number, fmt_percent, fmt_summarised, unreplicated_text
from generator.model.reported import changes, figures
from generator.views import variants as experiments
from generator.views.design import design_lines
from generator.views.noise import noise_lines, noise_table
from generator.views.page_models import MetricRow, ResultView
from generator.views.paths import ChartLink


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


_TESTS = {
    "welch": "Welch's t",
    "paired": "paired t",
    "delta": "delta method on the means",
    "sequence": "paired t confidence sequence",
}


def test_text(c: Comparison, unit: str) -> str | None:
    """The test a comparison was made with, as the page's Test column and the summary name it."""
    if not c.test:
        return None
    # The unit counted, when a launch holds several runs: the analysis names what it compared.
    on = ", on launch means" if unit == "launch" and c.test != "delta" else ""
    return _TESTS[c.test] + (", log scale" if c.scale == "ratio" else "") + on


def _change(c: Comparison, unit: str) -> tuple[str, str | None]:
    """(change, interval) as shown: in percent (the change's own estimate), or in the unit when
    the baseline mean is 0."""
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
    return compared_row(
        name,
        c,
        vocabulary,
        value=fmt_summarised(value, resolved.summaries[name]),
        baseline=fmt_summarised(base, resolved.baseline_summaries[name]) if base is not None else None,
        listed=_listed(value, base, c),
        counted=resolved.design.unit,
    )


def compared_row(
    name: str,
    c: Comparison | None,
    vocabulary: metrics.Vocabulary,
    *,
    value: str,
    baseline: str | None,
    listed: str | None = None,
    counted: str = "run",
) -> MetricRow:
    """A metric's row as the pages word it: a record's result, or two files `compare` was given.

    `counted`: what one observation is (`Design.unit`: a run, or a launch's runs' mean).
    """
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
        value=value,
        baseline=baseline,
        comparison=c,
        change=change,
        interval=interval,
        n=f"{c.n} / {c.baseline_n}" if c is not None else None,
        test=test_text(c, counted) if c is not None else None,
        decision=_decision_text(c) if c is not None else None,
        word=c.decision if c is not None else None,
        would_take=_would_take(c) if c is not None else None,
        listed=listed,
        arithmetic=_arithmetic(c) if c is not None else None,
    )


def result_view(
    resolved: ResolvedResult,
    strip: ChartLink | None = None,
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
        noise_table=noise_table(resolved.noise, vocabulary) if resolved.noise is not None else [],
        noise=noise_lines(resolved.noise, dict(resolved.comparisons), vocabulary) if resolved.noise is not None else [],
    )
