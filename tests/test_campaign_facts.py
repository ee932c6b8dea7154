"""The shipped GLM-5-NVFP4 campaign against its sources: the seed figures, exactly, and nothing invented.

The sources are kept unchanged under tests/fixtures/campaign-sources/. Figures are checked on the
loaded models (structured values, not text search), so a figure moved to prose or mistyped fails.
"""

from __future__ import annotations

import re
import shutil
from decimal import Decimal
from pathlib import Path

import pytest

from generator import metrics
from generator.model import Range, Record, apply_change
from generator.problems import Report
from generator.project import Project
from generator.validate import load_project

REPO = Path(__file__).resolve().parent.parent
SOURCES = Path(__file__).resolve().parent / "fixtures" / "campaign-sources"
SHARED = REPO.parent / "shared"

# Number, slug, tier and status of every record. The seeds name nine approaches and plan two
# more without naming them; a tenth record would be an invented approach.
EXPECTED = {
    1: ("piecewise-cuda-graphs", 1, "blocked"),
    2: ("mscclpp-allreduce", 1, "proposed"),
    3: ("single-batch-overlap", 1, "proposed"),
    4: ("tp4-pp2", 2, "proposed"),
    5: ("ep8", 2, "proposed"),
    6: ("all-reduce-fusion-sm120", 3, "rejected"),
    7: ("persistent-grouped-gemm", 3, "proposed"),
    8: ("flashinfer-trtllm-moe-runner", 1, "blocked"),
    9: ("num-continuous-decode-steps", 1, "rejected"),
}


def _load(root: Path) -> tuple[Project, Report]:
    report = Report()
    project = load_project(root, report)
    assert project is not None
    return project, report


@pytest.fixture(scope="module")
def project() -> Project:
    loaded, report = _load(REPO)
    assert report.ok, report
    return loaded


def _record(project: Project, slug: str) -> Record:
    return project.by_slug()[slug].record


def _source_text() -> str:
    files = [*sorted((SOURCES / "seeds").glob("*.txt")), SOURCES / "campaign-facts.md"]
    return "\n".join(f.read_text(encoding="utf-8") for f in files)


# --- the sources --------------------------------------------------------------------------


def test_source_copies_match_the_shared_originals() -> None:
    if not SHARED.is_dir():
        pytest.skip("the shared originals are only present in the project workspace")
    for copy in [*(SOURCES / "seeds").glob("*.txt"), SOURCES / "campaign-facts.md"]:
        original = SHARED / copy.relative_to(SOURCES)
        assert copy.read_bytes() == original.read_bytes(), copy.name
    assert {p.name for p in (SHARED / "seeds").glob("*.txt")} == {p.name for p in (SOURCES / "seeds").glob("*.txt")}


# --- the records that exist ---------------------------------------------------------------


def test_exactly_the_nine_named_approaches(project: Project) -> None:
    got = {rec.number: (rec.slug, rec.record.tier, rec.record.status) for rec in project.records}
    assert got == EXPECTED
    files = sorted(p.name for p in (REPO / "improvements").glob("*.yaml"))
    assert files == sorted(["campaign.yaml", *(f"{n:02d}-{slug}.yaml" for n, (slug, _, _) in EXPECTED.items())])


def test_statuses_are_backed(project: Project) -> None:
    for rec in project.records:
        r = rec.record
        if r.status == "proposed":
            assert not r.results and r.verdict is None, f"{rec.slug}: a plan with a result or a verdict"
        if r.status == "rejected":
            assert r.results and r.verdict, rec.slug


# --- the campaign -------------------------------------------------------------------------


def test_model_and_hardware(project: Project) -> None:
    c = project.campaign
    assert c.model.name == "GLM-5-NVFP4"
    assert c.model.parameters == "744B"
    assert c.model.details["experts"] == 256
    assert c.model.details["active experts per token"] == 8
    assert c.model.details["layers"] == 78
    assert str(c.model.details["all-reduces per forward pass"]).startswith("156 ")
    assert (c.hardware.count, c.hardware.architecture) == (8, "SM120")
    assert "no NVLink" in c.hardware.interconnect
    assert c.hardware.details["TDP"] == "600 W"
    assert c.engine.version is None  # not recorded in the seeds


def test_power_and_bottleneck_context(project: Project) -> None:
    context = " ".join(project.campaign.context)
    assert "about 330 W of their 600 W" in context
    assert "156 all-reduces" in context


def test_baseline_figures(project: Project) -> None:
    base = project.campaign.baseline
    tokens = base.command.split()
    assert tokens[tokens.index("--tp-size") + 1] == "8"
    assert tokens[tokens.index("--moe-runner-backend") + 1] == "flashinfer_cutlass"
    assert tokens[tokens.index("--max-running-requests") + 1] == "1024"
    by_conc = {r.concurrency: r for r in base.results}
    assert set(by_conc) == {1024, 1}
    assert by_conc[1024].metrics == {"total_throughput": 3740, "output_throughput": 1240}
    assert by_conc[1].metrics == {"output_throughput": Range(min=8, max=11)}
    assert not by_conc[1024].baseline and not by_conc[1].baseline


def test_single_stream_goal(project: Project) -> None:
    (goal,) = project.campaign.goals
    assert (goal.metric, goal.concurrency, goal.target, goal.direction) == ("output_throughput", 1, 100, "above")
    assert goal.current == Range(min=8, max=11)


# --- the measured records -----------------------------------------------------------------


def test_decode_steps_result(project: Project) -> None:
    r = _record(project, "num-continuous-decode-steps")
    (result,) = r.results
    assert result.concurrency == 512
    assert result.metrics == {"output_throughput": 901}
    assert result.baseline == {"output_throughput": 927}
    assert [(f.flag, f.value) for f in r.change.flags] == [("--num-continuous-decode-steps", "4")]


def test_all_reduce_fusion_result(project: Project) -> None:
    r = _record(project, "all-reduce-fusion-sm120")
    (result,) = r.results
    # The seeds give no concurrency and do not say output or total: both stay unknown.
    assert result.concurrency is None
    assert result.metrics == {"throughput": 236}
    assert result.baseline == {"throughput": 1867}
    assert "not recorded" in metrics.lookup("throughput").label
    slowdown = [b for b in r.blockers if b.title and "cudaGridDependencySynchronize()" in b.title]
    assert len(slowdown) == 1 and slowdown[0].status == "open" and slowdown[0].error is None


def test_piecewise_cuda_graphs(project: Project) -> None:
    r = _record(project, "piecewise-cuda-graphs")
    assert (r.tier, r.status) == (1, "blocked")
    assert [f.flag for f in r.change.flags] == ["--enable-piecewise-cuda-graph"]
    (blocker,) = r.blockers
    assert "torch.compile(fullgraph=True)" in blocker.title and blocker.status == "open"
    assert blocker.error is None  # the exact error text was not recorded
    first, second = blocker.attempts
    assert "get_cuda_version" in first.action and first.outcome == "failed"
    assert "@torch.compiler.disable" in second.action and "fp4_quantize" in second.action
    assert second.outcome == "failed"


def test_flashinfer_trtllm_outcome_stays_unknown(project: Project) -> None:
    r = _record(project, "flashinfer-trtllm-moe-runner")
    assert not r.results and r.verdict is None
    (blocker,) = r.blockers
    assert blocker.ref == "sm100-only-kernels"
    assert [a.outcome for a in blocker.attempts] == ["not-recorded"]


# --- layout changes and shared blockers ---------------------------------------------------


def test_tp4_pp2_replaces_the_tensor_parallel_size(project: Project) -> None:
    tokens = apply_change(project.campaign.baseline.command, _record(project, "tp4-pp2").change)
    assert tokens.count("--tp-size") == 1
    assert tokens[tokens.index("--tp-size") + 1] == "4"
    assert tokens[tokens.index("--pp-size") + 1] == "2"


def test_trtllm_runner_replaces_the_baseline_runner(project: Project) -> None:
    tokens = apply_change(project.campaign.baseline.command, _record(project, "flashinfer-trtllm-moe-runner").change)
    assert tokens.count("--moe-runner-backend") == 1
    assert tokens[tokens.index("--moe-runner-backend") + 1] == "flashinfer_trtllm"


def test_sm120_blocker_is_defined_once_and_shared(project: Project) -> None:
    defined = [rec.slug for rec in project.records for b in rec.record.blockers if b.id == "sm100-only-kernels"]
    referenced = sorted(
        rec.slug for rec in project.records for b in rec.record.blockers if b.ref == "sm100-only-kernels"
    )
    assert defined == ["persistent-grouped-gemm"]
    assert referenced == ["all-reduce-fusion-sm120", "flashinfer-trtllm-moe-runner"]


# --- links --------------------------------------------------------------------------------


def allowed_links(facts: str) -> set[str]:
    """The upstream links campaign-facts.md lists: sglang PRs and issues by number, and full URLs."""
    links = {f"https://github.com/sgl-project/sglang/pull/{n}" for n in re.findall(r"\bPR #(\d+)", facts)}
    links |= {f"https://github.com/sgl-project/sglang/issues/{n}" for n in re.findall(r"\bsglang #(\d+)", facts)}
    links |= {u.rstrip(".,)") for u in re.findall(r"https://\S+", facts) if "NUMBER" not in u}
    return links


def test_allowed_links_are_read_from_the_facts() -> None:
    links = allowed_links((SOURCES / "campaign-facts.md").read_text(encoding="utf-8"))
    assert "https://github.com/sgl-project/sglang/pull/10062" in links
    assert "https://github.com/sgl-project/sglang/issues/15650" in links
    assert "https://github.com/deepseek-ai/DeepEP/issues/462" in links
    assert "https://github.com/sgl-project/sglang/pull/15650" not in links


def test_every_cited_link_is_a_listed_upstream_link(project: Project) -> None:
    allowed = allowed_links((SOURCES / "campaign-facts.md").read_text(encoding="utf-8"))
    cited = [(project.campaign_file.path.name, ref.url) for ref in project.campaign.references]
    for rec in project.records:
        cited += [(rec.path.name, ref.url) for ref in rec.record.references]
        cited += [(rec.path.name, url) for b in rec.record.blockers for url in b.upstream]
        if rec.record.change is not None:
            cited += [(rec.path.name, p.upstream) for p in rec.record.change.patches if p.upstream]
    assert cited, "the campaign cites nothing"
    assert [c for c in cited if c[1] not in allowed] == []


def test_every_pr_or_issue_named_in_prose_is_cited(project: Project) -> None:
    for rec in project.records:
        text = rec.path.read_text(encoding="utf-8")
        cited = {ref.url.rsplit("/", 1)[1] for ref in rec.record.references}
        named = set(re.findall(r"#(\d+)", re.sub(r"https://\S+", "", text)))
        assert named <= cited, f"{rec.path.name}: #{sorted(named - cited)} named but not under references"


# --- numbers ------------------------------------------------------------------------------

# A number in a record is a run of digits (thousands commas and one decimal part allowed) that
# does not continue a word: "8x", "330 W", "99-100", "#15650" and "1,867" are numbers; TP4,
# SM120, GLM-5, fp4_quantize and Qwen3.5 are names. In the sources every digit run counts, names
# included, so "--tp-size 4" is backed by "TP4" and "SM120" by "SM120".
_RECORD_NUMBER = re.compile(r"(?<![A-Za-z0-9_.])(?<![A-Za-z]-)\d+(?:,\d{3})*(?:\.\d+)?")
_SOURCE_NUMBER = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?")
_URL = re.compile(r"https?://\S+")
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")


def _value(token: str) -> Decimal:
    return Decimal(token.replace(",", ""))


def source_numbers(text: str) -> set[Decimal]:
    return {_value(t) for t in _SOURCE_NUMBER.findall(text)}


def record_numbers(text: str) -> list[tuple[int, str]]:
    """(line, token) for every number in a record or campaign file's text, comments included.

    Not counted: URLs (the PR and issue numbers in them are checked as links), ISO dates, a
    record's `tier:` value and the tier keys of campaign.yaml's `tiers:` (tiers are the
    format's, not figures), and nothing else.
    """
    found: list[tuple[int, str]] = []
    in_tiers = False
    for n, line in enumerate(text.splitlines(), 1):
        if re.match(r"^tier:\s*[123]\s*$", line):
            continue
        if line.startswith("tiers:"):
            in_tiers = True
            continue
        if in_tiers and line and not line.startswith(" "):
            in_tiers = False
        if in_tiers:
            line = re.sub(r"^\s+[123]:", "", line)
        line = _DATE.sub("", _URL.sub("", line))
        found += [(n, t) for t in _RECORD_NUMBER.findall(line)]
    return found


def unbacked_numbers(root: Path, allowed: set[Decimal]) -> list[str]:
    out = []
    for path in sorted((root / "improvements").glob("*.yaml")):
        for line, token in record_numbers(path.read_text(encoding="utf-8")):
            if _value(token) not in allowed:
                out.append(f"{path.name}:{line}: {token}")
    return out


def test_every_number_in_the_records_comes_from_the_sources() -> None:
    assert unbacked_numbers(REPO, source_numbers(_source_text())) == []


def test_number_rule() -> None:
    text = (
        "tier: 2\n"
        "tiers:\n  1: Flag flips\n  3: Big\n"
        "title: TP4 on SM120 with fp4_quantize, GLM-5, Qwen3.5 and H100\n"
        "note: 8x GPUs, 99-100 KB, 1,867 tok/s, +6.7%, PR #16283 and 2026-01-02\n"
        "url: https://github.com/sgl-project/sglang/pull/77777\n"
        "# a comment with 4096\n"
    )
    tokens = [t for _, t in record_numbers(text)]
    assert tokens == ["8", "99", "100", "1,867", "6.7", "16283", "4096"]
    assert source_numbers("TP4 on SM120, 1,867 and 6.7") == {Decimal(4), Decimal(120), Decimal(1867), Decimal("6.7")}


def test_an_invented_number_is_caught(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    shutil.copytree(REPO / "improvements", root / "improvements")
    allowed = source_numbers(_source_text())
    assert unbacked_numbers(root, allowed) == []
    path = root / "improvements" / "09-num-continuous-decode-steps.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("output_throughput: 901", "output_throughput: 902"), encoding="utf-8")
    path2 = root / "improvements" / "04-tp4-pp2.yaml"
    path2.write_text(path2.read_text(encoding="utf-8") + "# measured at concurrency 48\n", encoding="utf-8")
    bad = unbacked_numbers(root, allowed)
    assert [b.split(": ", 1)[1] for b in bad] == ["48", "902"]
