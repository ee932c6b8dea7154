"""Evidence V (issue 51): what five public write-ups say that a record could not hold.

Each test writes a trimmed public example as a real YAML record and reads what `check`,
`build`, `stack` and `summary` make of it: a reason per variant (several metrics deciding, the
guardrails of every variant), ratios as written ("106x lower", "~2x", "doubles p50"), how the
container starts, and the author's standing and headline in the ranking.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.analysis.campaign import analyse
from generator.checks.validate import require_project

from conftest import run_cli


def _page(repo: Path, slug: str) -> str:
    [page] = (repo / "docs" / "improvements").glob(f"*-{slug}.md")
    return page.read_text()


def _write(repo: Path, name: str, text: str) -> None:
    (repo / "improvements" / name).write_text(text)


# --- a reason per variant ------------------------------------------------------------------------

# A write-up that swept the fraction of layers offloaded: "1/4, 1/3 and 1/2 rejected because the
# tested fractions regressed"; arm 1 (none offloaded) kept for its own reason; TTFT decided too.
FRACTIONS = """\
title: Layer offload fraction
tier: 1
status: rejected
verdict: No fraction pays; keep every layer on the GPU.
hypothesis: Offloading a fraction of the layers frees memory for a larger batch.
expected:
  metric: output_throughput
  guardrails: {ttft_p99: 5}
decided_by:
  - {metric: output_throughput, variant: "1/2", result: decode, change: -31}
  - {metric: ttft_p99, variant: "1/2", result: decode, note: the first token waits on the offloaded layers}
sweep: {parameter: offload fraction}
variants:
  - label: "0"
    value: 0
    outcome: diagnostic
    reason: arm 1, the baseline configuration run again to measure the drift between blocks
    results:
      - label: decode
        concurrency: 8
        metrics: {output_throughput: [40.2, 40.0, 40.3, 40.1, 40.2]}
        baseline: {output_throughput: [40.1, 40.4, 39.9, 40.2, 40.0]}
  - label: "1/4"
    value: 0.25
    outcome: rejected
    reason: the tested fractions regressed
    results:
      - label: decode
        concurrency: 8
        metrics: {output_throughput: [36.1, 36.3, 35.9, 36.2, 36.0], ttft_p99: [1210, 1220, 1205, 1215, 1212]}
        baseline: {output_throughput: [40.1, 40.4, 39.9, 40.2, 40.0], ttft_p99: [800, 805, 798, 802, 801]}
  - label: "1/3"
    value: 0.33
    outcome: rejected
    reason: the tested fractions regressed
    decided_by: {metric: output_throughput, result: decode}
    results:
      - label: decode
        concurrency: 8
        metrics: {output_throughput: [33.0, 33.2, 32.9, 33.1, 33.0]}
        baseline: {output_throughput: [40.1, 40.4, 39.9, 40.2, 40.0]}
  - label: "1/2"
    value: 0.5
    outcome: rejected
    reason: the tested fractions regressed
    results:
      - label: decode
        concurrency: 8
        metrics: {output_throughput: [27.7, 27.9, 27.6, 27.8, 27.7], ttft_p99: [1700, 1710, 1690, 1705, 1702]}
        baseline: {output_throughput: [40.1, 40.4, 39.9, 40.2, 40.0], ttft_p99: [800, 805, 798, 802, 801]}
"""


@pytest.fixture
def fractions(minimal: Path) -> Path:
    _write(minimal, "01-offload.yaml", FRACTIONS)
    return minimal


def test_several_metrics_decide_and_each_variant_keeps_its_reason(fractions: Path) -> None:
    check = run_cli("check", "--root", str(fractions))
    assert check.returncode == 0, check.stderr
    assert "status-contradicts-evidence" not in check.stderr
    ra = analyse(require_project(fractions)).records[0]
    own = [d for d in ra.deciders if d.owner is None]
    assert [(d.metric, d.variant) for d in own] == [("output_throughput", "1/2"), ("ttft_p99", "1/2")]
    assert own[0].comparison is not None and own[0].comparison.decision == "worse" and own[0].agrees is True
    [arm] = [d for d in ra.deciders if d.owner == "1/3"]
    assert arm.comparison is not None and arm.comparison.decision == "worse"


def test_guardrails_are_read_on_every_variant(fractions: Path) -> None:
    ra = analyse(require_project(fractions)).records[0]
    by_label = dict(zip([v.label for v in ra.file.record.variants], ra.variant_guardrails, strict=True))
    # TTFT +51% on the 1/4 arm and +113% on the 1/2 arm: each broken, read on that arm's results.
    assert [g.state for g in by_label["1/4"]] == ["broken"] and [g.state for g in by_label["1/2"]] == ["broken"]
    assert [g.state for g in by_label["1/3"]] == ["not measured"]


def test_reasons_are_shown_beside_each_variant_on_the_page_and_summary(fractions: Path) -> None:
    build = run_cli("build", "--root", str(fractions))
    assert build.returncode == 0, build.stderr
    page = _page(fractions, "offload")
    assert "why diagnostic: arm 1, the baseline configuration run again" in page
    assert "why rejected: the tested fractions regressed; decided by Output token throughput in result decode:" in page
    assert "guardrail broken: Time to first token (P99) +" in page
    assert "(the first token waits on the offloaded layers)" in page
    rows = json.loads(run_cli("summary", "--root", str(fractions), "--format", "json").stdout)
    reasons = rows[0]["variant_reasons"]
    assert reasons[0].startswith("0 diagnostic: arm 1, the baseline configuration")
    assert any(
        r.startswith("1/3 rejected: the tested fractions regressed; decided by Output token throughput")
        for r in reasons
    )
    assert "the tested fractions regressed" in (fractions / "docs" / "summary.md").read_text()


def test_the_single_mapping_form_stays_valid_and_a_wrong_variant_result_is_refused(fractions: Path) -> None:
    one = FRACTIONS.replace(
        'decided_by:\n  - {metric: output_throughput, variant: "1/2", result: decode, change: -31}\n'
        '  - {metric: ttft_p99, variant: "1/2", result: decode, note: the first token waits on the offloaded layers}\n',
        'decided_by: {metric: output_throughput, variant: "1/2", result: decode, change: -31}\n',
    )
    assert one != FRACTIONS
    _write(fractions, "01-offload.yaml", one)
    assert run_cli("check", "--root", str(fractions)).returncode == 0
    assert analyse(require_project(fractions)).records[0].decider is not None
    _write(
        fractions,
        "01-offload.yaml",
        FRACTIONS.replace(
            "decided_by: {metric: output_throughput, result: decode}",
            "decided_by: {metric: output_throughput, result: prefill}",
        ),
    )
    check = run_cli("check", "--root", str(fractions))
    assert check.returncode == 1
    assert "error[unknown-result]: variant `1/3`'s `decided_by` names result `prefill`, not among its results" in (
        check.stderr
    )


# --- ratios as written ---------------------------------------------------------------------------

# A write-up that gives no values, only ratios: "106x lower", "~2x", "doubles p50", "5x more spikes",
# "9x fewer"; and a sweep whose points are only percent changes.
RATIOS = """\
title: Radix cache for shared prefixes
tier: 1
status: adopted
verdict: Kept.
hypothesis: Reusing the cached prefix skips most of the prefill.
expected:
  metric: output_throughput
  guardrails: {itl_p50: 5}
results:
  - label: shared prefix, as the author reported
    concurrency: 16
    reported_change:
      ttft_median: {ratio: 106, direction: lower}
      output_throughput: {ratio: 2, direction: higher, about: true}
  - label: long prompts, as the author reported
    concurrency: 16
    reported_change:
      itl_p50: {ratio: 2, direction: higher}
"""

PERCENT_SWEEP = """\
title: Chunk size, percent only
tier: 1
status: adopted
verdict: 4096 kept.
hypothesis: A smaller chunk interleaves prefill with decode.
sweep: {parameter: --chunked-prefill-size, metric: ttft_p99}
variants:
  - label: "2048"
    value: 2048
    outcome: rejected
    results:
      - {label: 124K C=2, concurrency: 2, reported_change: {ttft_p99: -12.5}}
  - label: "4096"
    value: 4096
    outcome: retained
    results:
      - {label: 124K C=2, concurrency: 2, reported_change: {ttft_p99: -38.2}}
  - label: "8192"
    value: 8192
    outcome: rejected
    results:
      - {label: 124K C=2, concurrency: 2, reported_change: {ttft_p99: {ratio: 9, direction: lower}}}
"""


def test_stated_ratios_are_typed_shown_as_written_and_never_measured(minimal: Path) -> None:
    _write(minimal, "01-radix.yaml", RATIOS)
    check = run_cli("check", "--root", str(minimal))
    assert check.returncode == 0, check.stderr
    ra = analyse(require_project(minimal)).records[0]
    # Stated, never compared: the record ranks as reported, and the doubled ITL (+100%) breaks
    # its guardrail at face value, as a reported percent does.
    assert ra.primary is None and ra.group == "reported"
    assert run_cli("build", "--root", str(minimal)).returncode == 0
    page = _page(minimal, "radix")
    assert "106x lower (-99.1%)" in page and "~2x higher (+100.0%)" in page
    rows = json.loads(run_cli("summary", "--root", str(minimal), "--format", "json").stdout)
    assert rows[0]["primary_decision"] == "reported" and "106x lower (-99.1%)" in rows[0]["reported"]


def test_a_stated_ratio_breaks_a_guardrail_at_face_value(minimal: Path) -> None:
    measured = RATIOS.replace(
        "results:\n",
        "results:\n  - label: decode\n    concurrency: 16\n"
        "    metrics: {output_throughput: [52.3, 51.8, 52.9, 52.1, 52.6]}\n"
        "    baseline: {output_throughput: [40.1, 40.4, 39.9, 40.2, 40.0]}\n",
        1,
    )
    _write(minimal, "01-radix.yaml", measured)
    primary = analyse(require_project(minimal)).records[0].primary
    assert primary is not None
    [itl] = [g for g in primary.guardrails if g.metric == "itl_p50"]
    assert (itl.state, itl.reported, itl.change_percent) == ("broken", True, pytest.approx(100.0))


@pytest.mark.parametrize(
    ("value", "complaint"),
    [
        (
            "{ratio: 0.5, direction: lower}",
            "`results[1].reported_change.itl_p50.ratio` is 0.5; expected a number of at least 1",
        ),
        ("{ratio: 5, direction: more}", "'higher' or 'lower'"),
    ],
)
def test_a_ratio_below_one_or_without_a_direction_is_refused(minimal: Path, value: str, complaint: str) -> None:
    _write(minimal, "01-radix.yaml", RATIOS.replace("{ratio: 2, direction: higher}", value))
    check = run_cli("check", "--root", str(minimal))
    assert check.returncode == 1 and complaint in check.stderr


def test_percent_only_sweep_points_are_drawn_as_stated(minimal: Path) -> None:
    _write(minimal, "01-chunk.yaml", PERCENT_SWEEP)
    build = run_cli("build", "--root", str(minimal))
    assert build.returncode == 0, build.stderr
    [svg] = (minimal / "docs").rglob("sweeps/chunk.svg")
    text = svg.read_text()
    assert "change as stated (%)" in text and ", as stated" in text
    page = _page(minimal, "chunk")
    # Each point at its stated percent, and said to be stated: -12.5, -38.2 and 9x lower (-88.9%).
    assert "2048: -12.5 (stated, not measured); 4096: -38.2 (stated, not measured), retained" in page
    assert "8192: -88.89 (stated as 9x lower, not measured)" in page
    assert "9x lower (-88.9%) as reported" in page


# --- how the container starts --------------------------------------------------------------------

# `docker run --gpus all --shm-size 32g --ipc=host -v ~/.cache/huggingface:/root/.cache/huggingface`
# and a config file written by a heredoc and mounted read-only.
CONTAINER = """\
title: MoE kernel config
tier: 1
status: adopted
verdict: Kept.
hypothesis: A tuned fused-MoE config for this GPU beats the default tile sizes.
change:
  flags: ["--moe-runner-backend triton"]
  container:
    options: ["--shm-size 32g", "--ipc=host"]
    volumes:
      - /data/hf:/root/.cache/huggingface:ro
      - {host: /srv/moe-configs, container: /configs, note: the tuned config below}
    files:
      - path: /configs/E=256,N=256,device_name=NVIDIA_H200.json
        content: |
          {"1": {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 64}}
      - path: /etc/sglang/extra.yaml
        digest: sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
results:
  - label: decode
    concurrency: 8
    metrics: {output_throughput: [52.3, 51.8, 52.9, 52.1, 52.6]}
    baseline: {output_throughput: [40.1, 40.4, 39.9, 40.2, 40.0]}
"""


def test_a_container_start_is_shown_on_the_page_and_in_the_stack(minimal: Path) -> None:
    _write(minimal, "01-moe.yaml", CONTAINER)
    check = run_cli("check", "--root", str(minimal))
    assert check.returncode == 0, check.stderr
    build = run_cli("build", "--root", str(minimal))
    assert build.returncode == 0, build.stderr
    page = _page(minimal, "moe")
    assert "- `docker run` option: `--shm-size 32g`" in page
    assert "- volume: `-v /data/hf:/root/.cache/huggingface:ro`" in page
    assert '  {"1": {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 64}}' in page
    assert "`sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08`" in page
    out = run_cli("stack", "--root", str(minimal))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    head = "# How the container starts (docker run options; this script does not start it):"
    start = lines.index(head)
    # Comments only: piped to bash, nothing here runs on the host.
    # One heading per record, then its options, volumes and files.
    assert lines[start + 1 : start + 4] == ["# from 01-moe:", "#   --shm-size 32g", "#   --ipc=host"]
    assert "#   -v /srv/moe-configs:/configs" in lines
    assert (
        "#   file /etc/sglang/extra.yaml (sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08)"
        in lines
    )
    data = json.loads(run_cli("stack", "--root", str(minimal), "--format", "json").stdout)
    assert {"line": "-v /data/hf:/root/.cache/huggingface:ro", "record": "01-moe"} in data["container"]


def test_a_mounted_file_needs_its_text_or_digest_and_a_volume_its_form(minimal: Path) -> None:
    _write(minimal, "01-moe.yaml", CONTAINER.replace("        digest: sha256:9f86", "        note: sha256:9f86"))
    check = run_cli("check", "--root", str(minimal))
    assert check.returncode == 1 and "a mounted file needs its `content` or its `digest`" in check.stderr
    _write(minimal, "01-moe.yaml", CONTAINER.replace("/data/hf:/root/.cache/huggingface:ro", "/data/hf"))
    check = run_cli("check", "--root", str(minimal))
    assert check.returncode == 1 and "a volume is `host:container`" in check.stderr


def test_the_runner_refuses_a_change_that_needs_its_own_container_start(minimal: Path) -> None:
    from generator.checks.runnable import not_runnable

    _write(minimal, "01-moe.yaml", CONTAINER)
    [problem] = not_runnable(require_project(minimal), "error")
    assert problem.code == "not-runnable" and "`change.container`" in problem.message
    assert "own container start" in problem.message


# --- standing, headline and "historical" in the ranking ------------------------------------------

RECIPE = """\
title: Recommended serving recipe
tier: 1
status: adopted
standing: recommended
verdict: The recipe the author recommends.
hypothesis: The tuned recipe serves more tokens per second.
results:
  - label: decode
    concurrency: 8
    metrics: {output_throughput: [48.3, 48.8, 48.1, 48.6, 48.4]}
    baseline: {output_throughput: [40.1, 40.4, 39.9, 40.2, 40.0]}
"""

DCA = """\
title: Dual chunk attention patch
tier: 1
status: in-progress
standing: undecided
hypothesis: DCA keeps long prompts on one GPU.
results:
  - label: decode
    concurrency: 8
    metrics: {output_throughput: [213.7, 214.6, 213.4, 214.2, 213.9]}
    baseline: {output_throughput: [40.1, 40.4, 39.9, 40.2, 40.0]}
"""

OLD = RECIPE.replace("Recommended serving recipe", "Last year's recipe").replace(
    "standing: recommended", "standing: historical"
)

# The author leads with 124K C=2 (-38.2% TTFT); the first comparison is 59K C=2 (-22.8%).
HEADLINE = """\
title: Context parallel prefill
tier: 1
status: adopted
verdict: Kept for long prompts.
hypothesis: Splitting the prompt across GPUs cuts the first token's wait.
expected: {metric: ttft_p99}
headline: {result: 124K C=2, note: the author's headline}
results:
  - label: 59K C=2
    concurrency: 2
    metrics: {ttft_p99: [7720, 7730, 7710, 7725, 7715]}
    baseline: {ttft_p99: [10000, 10010, 9990, 10005, 9995]}
  - label: 124K C=2
    concurrency: 2
    metrics: {ttft_p99: [12360, 12370, 12350, 12365, 12355]}
    baseline: {ttft_p99: [20000, 20010, 19990, 20005, 19995]}
"""


def test_the_recommended_recipe_ranks_above_an_undecided_patch(minimal: Path) -> None:
    _write(minimal, "01-dca.yaml", DCA)
    _write(minimal, "02-recipe.yaml", RECIPE)
    _write(minimal, "03-old.yaml", OLD)
    analysis = analyse(require_project(minimal))
    assert [a.file.slug for a in analysis.ranked] == ["recipe", "dca", "old"]
    dca = next(a for a in analysis.records if a.file.slug == "dca")
    assert dca.primary is not None and dca.primary.comparison.change_percent == pytest.approx(433, abs=1)
    rows = json.loads(run_cli("summary", "--root", str(minimal), "--format", "json").stdout)
    assert [r["slug"] for r in rows] == ["recipe", "dca", "old"]
    assert rows[2]["standing"] == "historical"
    assert run_cli("build", "--root", str(minimal)).returncode == 0
    assert (
        "- Historical (adopted, since overtaken): [03 Last year's recipe]("
        in (minimal / "docs" / "index.md").read_text()
    )


def test_historical_is_a_standing_of_an_adopted_record(minimal: Path) -> None:
    _write(minimal, "03-old.yaml", OLD.replace("status: adopted", "status: rejected"))
    check = run_cli("check", "--root", str(minimal))
    assert check.returncode == 1
    assert "`standing: historical` is for an adopted record; this one is `rejected`" in check.stderr


def test_the_headline_result_is_the_ranked_comparison(minimal: Path) -> None:
    _write(minimal, "01-cp.yaml", HEADLINE)
    assert run_cli("check", "--root", str(minimal)).returncode == 0
    primary = analyse(require_project(minimal)).records[0].primary
    assert primary is not None and primary.label == "124K C=2"
    assert primary.comparison.change_percent == pytest.approx(-38.2, abs=0.05)
    assert primary.chosen == "the record's headline result, 124K C=2"
    # Left out, the first comparison ranks: 59K at -22.8%.
    _write(minimal, "01-cp.yaml", HEADLINE.replace("headline: {result: 124K C=2, note: the author's headline}\n", ""))
    primary = analyse(require_project(minimal)).records[0].primary
    assert primary is not None and primary.label == "59K C=2"
    assert primary.comparison.change_percent == pytest.approx(-22.8, abs=0.05)


def test_a_headline_naming_no_result_is_refused(minimal: Path) -> None:
    _write(minimal, "01-cp.yaml", HEADLINE.replace("headline: {result: 124K C=2", "headline: {result: 124K C=4"))
    check = run_cli("check", "--root", str(minimal))
    assert check.returncode == 1
    assert "error[unknown-result]: `headline` names result `124K C=4`, not among the record's own results" in (
        check.stderr
    )
