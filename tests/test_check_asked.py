"""`check` analyses only the records its rules read (`analysis.asked`), and reports what the whole analysis gives.

Every campaign below is checked twice: as `check` does it, and with the analysis of every
record (`analyse`, what `check` did before and a build still does). The two must print the
same problems, with the same codes, places and words, in the same order. The seeded synthetic
campaign holds a record for each reason a rule reads a record (repetitions, a contradicted
status, `decided_by`, a quote, a reported change past a guardrail, a load sweep under an SLO,
`remove_flags`), most of them among single shots that no rule reads.
"""

from __future__ import annotations

import random
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from generator.analysis import asked
from generator.analysis.asked import NotAsked, analyse_asked, analysis_warnings
from generator.analysis.campaign import analyse
from generator.analysis.quoting import file_quotes, quotes_in
from generator.authoring.edit import Document
from generator.base.problems import Problem, Report, rel
from generator.base.read import parse
from generator.checks.validate import load_project
from generator.project.load import Loaded, Project

from conftest import FIXTURES, REPO, run_cli

sys.path.insert(0, str(REPO / "benchmarks"))
from synth import make_campaign


def _edit(path: Path, change: Any) -> None:
    doc = Document.from_path(path)
    change(doc.data)
    path.write_text(doc.text(), encoding="utf-8")


def _result(label: str, concurrency: int, metrics: dict[str, Any], baseline: dict[str, Any]) -> dict[str, Any]:
    return {"label": label, "concurrency": concurrency, "metrics": metrics, "baseline": baseline}


def seeded_campaign(root: Path, seed: int, n: int = 48) -> Path:
    """The benchmark's synthetic records with, on records picked by `seed`, one reason each for a rule to read them.

    Over 60 lines: one edit per reason, each a few lines, kept together so the list reads as the module's.
    """
    paths = make_campaign(root, n, seed)
    rng = random.Random(seed)

    def campaign(data: Any) -> None:
        data["slo"] = {"tpot_median": 40}
        data["decision"]["guardrails"] = {"itl_p99": 5}

    _edit(root / "improvements" / "campaign.yaml", campaign)
    by_status: dict[str, list[Path]] = {}
    for path in paths:
        status = Document.from_path(path).data["status"]
        by_status.setdefault(status, []).append(path)
    for key in by_status:
        rng.shuffle(by_status[key])
    adopted, rejected, progress = by_status["adopted"], by_status["rejected"], by_status["in-progress"]
    steady = [90.0, 91.0, 92.0]

    def repeated(own: list[float], base: list[float]) -> Any:
        def change(data: Any) -> None:
            data["results"] = [_result("replicated", 1, {"output_throughput": own}, {"output_throughput": base})]
            data.get("expected", {}).pop("concurrency", None)
            if "expected" in data:
                data["expected"]["metric"] = "output_throughput"

        return change

    _edit(adopted[0], repeated([50.0, 51.0, 52.0], steady))  # worse: contradicts `adopted`
    _edit(rejected[0], repeated([150.0, 151.0, 152.0], steady))  # better: contradicts `rejected`
    _edit(progress[0], repeated([100.0, 310.0, 120.0], steady))  # spread beyond one configuration
    _edit(adopted[1], repeated([50.0], [90.0]))  # a single shot: decides nothing, no rule reads it

    def decided(data: Any) -> None:
        first = data["results"][0]
        metric = next(iter(first["metrics"]))
        data["decided_by"] = {"metric": metric, "result": first["label"], "change": 75}

    _edit(rejected[1], decided)  # a single shot whose stated change its numbers do not give

    def reported(data: Any) -> None:
        data["results"] = [_result("reported", 1, {"output_throughput": 100.0}, {"output_throughput": 90.0})]
        data["results"][0]["reported_change"] = {"itl_p99": 40}
        data.pop("expected", None)

    _edit(adopted[2], reported)  # a reported regression past the guardrail's margin

    def sweep(data: Any) -> None:
        data["results"] = [
            _result(
                f"c{c}", c, {"output_throughput": t, "tpot_median": lat}, {"output_throughput": b, "tpot_median": bl}
            )
            for c, t, lat, b, bl in ((1, 50.0, 10.0, 45.0, 11.0), (64, 1000.0, 80.0, 900.0, 85.0))
        ]

    _edit(progress[1], sweep)  # capacity under the SLO between loads 64 times apart: coarse

    def removes(data: Any) -> None:
        data["change"]["remove_flags"] = ["--no-such-flag"]

    _edit(progress[2], removes)
    quoted, named = by_status["proposed"][0], progress[3]
    slug = named.stem.split("-", 1)[1]
    number = int(named.stem.split("-", 1)[0])

    def quotes(data: Any) -> None:
        data["summary"] += (
            f" It quotes {{{{ {slug}.r1.output_throughput.mean }}}}, {{{{ {number}.c999.output_throughput.change }}}}"
            " and {{ no-such-record.r1.output_throughput.change }}."
        )

    _edit(quoted, quotes)
    return root


def _load(root: Path) -> Project:
    report = Report()
    project = load_project(root, report)
    assert project is not None and report.ok, [str(p) for p in report.problems]
    return project


def _whole(project: Project) -> list[Problem]:
    return analysis_warnings(analyse(project, launches=False))


def _campaigns(tmp: Path) -> dict[str, Path]:
    return {
        "shipped": REPO,
        "h200-decode": REPO / "examples" / "h200-decode",
        "h200-runner": REPO / "examples" / "h200-runner",
        "seeded-3": seeded_campaign(tmp / "seeded-3", 3),
        "seeded-11": seeded_campaign(tmp / "seeded-11", 11),
        "spreads": _fixture_campaign(tmp / "spreads", "spread-beyond-one-configuration"),
        "contradiction": _fixture_campaign(tmp / "contradiction", "status-contradicts-evidence"),
    }


def _fixture_campaign(root: Path, code: str) -> Path:
    """A catalogue example laid over the catalogue's minimal campaign, as `test_catalogue` lays it."""
    errors = FIXTURES / "errors"
    (root / "improvements").mkdir(parents=True)
    (root / "results").mkdir()
    shutil.copy(errors / "campaign.yaml", root / "improvements" / "campaign.yaml")
    shutil.copytree(errors / code, root, dirs_exist_ok=True)
    return root


@pytest.fixture(scope="module")
def campaigns(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return _campaigns(tmp_path_factory.mktemp("asked"))


NAMES = ["shipped", "h200-decode", "h200-runner", "seeded-3", "seeded-11", "spreads", "contradiction"]


@pytest.mark.parametrize("name", NAMES)
def test_the_warnings_are_the_whole_analysis_ones(campaigns: dict[str, Path], name: str) -> None:
    project = _load(campaigns[name])
    assert analysis_warnings(analyse_asked(project)) == _whole(project)


@pytest.mark.parametrize("name", NAMES)
def test_every_record_a_warning_is_about_is_analysed(campaigns: dict[str, Path], name: str) -> None:
    """A rule that warns about a record read its analysis, and a quote reads the record it names:
    `asks` must have named both. (`remove_flags` is read from the file alone.)"""
    project = _load(campaigns[name])
    analysed = {a.file.path for a in analyse_asked(project).records}
    by_shown = {rel(rec.path, project.root): rec.path for rec in project.records}
    whole = _whole(project)
    own = {"unknown-reference"} | {p.code for p in whole if "remove_flags" in p.message}
    warned = {by_shown[p.path] for p in whole if p.path in by_shown and p.code not in own}
    quoted = {
        rec.path
        for rec in project.records
        for p in whole
        if p.code == "unknown-reference" and f"record `{rec.slug}`" in p.message
    }
    assert warned | quoted <= analysed


def test_the_seeded_campaign_meets_every_rule(campaigns: dict[str, Path]) -> None:
    """The seeded campaigns give every warning the lazy path could lose, and leave most records unread."""
    for name in ("seeded-3", "seeded-11"):
        project = _load(campaigns[name])
        codes = {p.code for p in _whole(project)}
        assert codes >= {
            "status-contradicts-evidence",
            "spread-beyond-one-configuration",
            "guardrail-broken",
            "coarse-sweep",
            "unknown-reference",
            "invalid-value",
        }, codes
        messages = " ".join(p.message for p in _whole(project))
        assert "is said to be decided by" in messages
        assert len(analyse_asked(project).records) < len(project.records) / 2


def test_a_record_left_out_changes_what_is_reported(
    campaigns: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The comparison above catches a skipped record: asking for none loses warnings, and a quote of one raises."""
    project = _load(campaigns["seeded-3"])
    monkeypatch.setattr(asked, "asks", lambda *args: False)
    with pytest.raises(NotAsked):
        analysis_warnings(analyse_asked(project))
    lost = analyse_asked(project)
    from generator.analysis.verdicts import evidence_problems, status_problems

    assert status_problems(lost) == [] and evidence_problems(lost) == []
    assert [p for p in _whole(project) if p.code in ("status-contradicts-evidence", "guardrail-broken")]


@pytest.mark.parametrize("fmt", ["text", "json"])
@pytest.mark.parametrize("name", NAMES)
def test_check_prints_what_it_printed_with_the_whole_analysis(
    campaigns: dict[str, Path], name: str, fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = str(campaigns[name])
    lazy = run_cli("check", "--format", fmt, "--root", root)
    monkeypatch.setattr(asked, "analyse_asked", lambda project: analyse(project, launches=False))
    whole = run_cli("check", "--format", fmt, "--root", root)
    assert (lazy.returncode, lazy.stdout, lazy.stderr) == (whole.returncode, whole.stdout, whole.stderr)
    assert "Traceback" not in lazy.stderr


@pytest.mark.parametrize("name", NAMES)
def test_a_files_quotes_are_those_of_its_data(campaigns: dict[str, Path], name: str) -> None:
    """`file_quotes` skips the walk only for a text that cannot quote (no `{{`, no escape)."""
    project = _load(campaigns[name])
    for loaded in [project.campaign_file, *project.records]:
        assert file_quotes(loaded) == quotes_in(loaded.data)


@pytest.mark.parametrize(
    "summary",
    [
        '"An escaped \\x7b\\x7b 01.r1.output_throughput.change }} quote"',
        '"A {\\\n  {01.r1.output_throughput.change }} quote over a line break"',
        '"Two \\u007B\\u007b 01.r1.output_throughput.change }}"',
    ],
)
def test_a_quote_written_with_escapes_is_found(summary: str) -> None:
    text = f"title: Escapes\nsummary: {summary}\n"
    data, positions = parse(text)
    assert "{{" not in text and "{{" in data["summary"]
    loaded = Loaded(Path("x.yaml"), None, data, positions, text)
    assert file_quotes(loaded) == quotes_in(data) != ()
