"""Every page says what its figures estimate, checked against the export (issue 50).

The three shipped campaigns are built as they ship (copied, so nothing of the repository is
written), and each page is read beside the export's `records.json`:

- no page calls the change "percent of the baseline mean": it is the geometric mean of the
  (paired) ratios, and every record page's "how to read" says so;
- each "how to read" states the record's own multiplicity (the most metrics a result decides,
  and 1 - (1 - alpha)^k) and, for a record with a sequential result, why Holm does not apply;
- every "x" printed beside a percent is that percent's own estimate, within the rounding
  ("1.63x eager's (+61.5%)" put the arithmetic means' ratio beside the geometric change);
- where the arithmetic means' ratio differs as printed, the metric table names it;
- the road's change in the unit is its percent of the level before ("-0.7709 tok/s (-2.1%)"
  was -1.3% of 59.05).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from generator.model.quantity import fmt_percent

from conftest import run_cli

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent
CAMPAIGNS = {
    "glm5": (REPO, ("improvements", "results", "mkdocs.yml")),
    "h200-decode": (REPO / "examples" / "h200-decode", None),
    "h200-runner": (REPO / "examples" / "h200-runner", None),
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out: dict[str, Path] = {}
    for name, (source, parts) in CAMPAIGNS.items():
        root = tmp_path_factory.mktemp(name)
        if parts is None:
            shutil.copytree(source, root, dirs_exist_ok=True, ignore=shutil.ignore_patterns("docs", "site"))
        else:
            for part in parts:
                if (source / part).is_dir():
                    shutil.copytree(source / part, root / part)
                elif (source / part).exists():
                    shutil.copy2(source / part, root / part)
        done = run_cli("build", "--root", str(root))
        assert done.returncode == 0, done.stderr
        out[name] = root
    return out


def _export(root: Path) -> dict[str, Any]:
    found = json.loads((root / "docs" / "records.json").read_text(encoding="utf-8"))
    assert isinstance(found, dict)
    return found


def _comparisons(record: dict[str, Any]) -> list[list[dict[str, Any]]]:
    """Each result's comparisons (own results, then the variants'), as the export lists them."""
    results = list(record["results"]) + [r for rs in record.get("variant_results") or [] for r in rs]
    return [[c for c in (r.get("comparisons") or {}).values() if c is not None] for r in results]


def test_no_page_calls_a_geometric_change_a_percent_of_the_baseline_mean(built: dict[str, Path]) -> None:
    for root in built.values():
        for page in (root / "docs").rglob("*.md"):
            assert "percent of the baseline mean" not in page.read_text(encoding="utf-8"), page


def test_each_how_to_read_says_the_estimator_the_multiplicity_and_holm(built: dict[str, Path]) -> None:
    checked = 0
    for root in built.values():
        export = _export(root)
        alpha = export["campaign"]["decision"]["alpha"]
        for record in export["records"]:
            page = (root / record["page"]).read_text(encoding="utf-8")
            reading = next((line for line in page.splitlines() if line.startswith("How to read the results:")), None)
            results = _comparisons(record)
            if not any(results):
                continue
            assert reading is not None, record["page"]
            assert "the geometric mean of the paired ratios" in reading
            assert "the ratio of the two sides' geometric means" in reading
            assert "percent of the baseline mean" not in reading
            k = max(len([c for c in cs if c["decision"] != "unreplicated"]) for cs in results)
            if k >= 2:
                rate = 100 * (1 - (1 - alpha) ** k)
                assert f"decides up to {k} metrics" in reading, (record["page"], reading)
                assert f"a chance of up to {rate:.0f}%" in reading
            else:
                assert "decides up to" not in reading
            sequential = any(c["test"] == "sequence" for cs in results for c in cs if c["decision"] != "unreplicated")
            assert ("Holm's correction does not apply to a sequential result" in reading) == sequential
            checked += 1
    assert checked >= 6


_FOLD = re.compile(r"(\d+(?:\.\d+)?)x [^()|]{0,40}?\(([+-]\d+(?:\.\d+)?)%")


def _decimals(text: str) -> int:
    return len(text.split(".")[1]) if "." in text else 0


def test_every_x_beside_a_percent_is_the_same_estimate(built: dict[str, Path]) -> None:
    pairs = 0
    for root in built.values():
        for page in (root / "docs").rglob("*.md"):
            for m in _FOLD.finditer(page.read_text(encoding="utf-8")):
                times, percent = m.group(1), m.group(2)
                slack = 0.5 * 10 ** -_decimals(times) + 0.5 * 10 ** -_decimals(percent) / 100
                assert abs(float(times) - (1 + float(percent) / 100)) <= slack + 1e-12, (page, m.group(0))
                pairs += 1
    # The runner's record 01 verdict is one such pair ("1.62x eager's (+61.5%").
    assert pairs >= 1


def test_the_arithmetic_means_are_named_where_they_differ(built: dict[str, Path]) -> None:
    named = 0
    for root in built.values():
        for record in _export(root)["records"]:
            page = (root / record["page"]).read_text(encoding="utf-8")
            for cs in _comparisons(record):
                for c in cs:
                    if c["scale"] != "ratio" or c["change_percent"] is None or not c["baseline_mean"]:
                        continue
                    arith = fmt_percent(100 * (c["mean"] / c["baseline_mean"] - 1))
                    change = fmt_percent(c["change_percent"])
                    assert change in page
                    if arith != change:
                        assert f"arithmetic means {arith}" in page, (record["page"], change, arith)
                        named += 1
    assert named >= 1


def test_the_roads_change_in_the_unit_is_its_percent(built: dict[str, Path]) -> None:
    home = (built["h200-decode"] / "docs" / "index.md").read_text(encoding="utf-8")
    road = home.split("## The road to the goal", 1)[1].split("</div>", 1)[0]
    rows = [line for line in road.splitlines() if line.startswith("| ") and not line.startswith("| Step")]
    desc = (built["h200-decode"] / "docs" / "plots" / "road-to-goal.svg").read_text(encoding="utf-8")
    level_before: float | None = None
    steps = 0
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        level = re.match(r"\**([\d.]+)", cells[-1])
        m = re.match(r"([+-]?[\d.]+) tok/s \(([+-][\d.]+)%\)", cells[3]) if len(cells) > 3 else None
        if m is not None and level_before is not None:
            change, percent = float(m.group(1)), float(m.group(2))
            assert abs(100 * change / level_before - percent) <= 0.05 + 0.01 * abs(percent), row
            # The chart prints the same estimate beside the same interval.
            assert f"{m.group(1)} (interval" in desc, (m.group(1), desc)
            steps += 1
        if level is not None and level.group(1):
            level_before = float(level.group(1))
    assert steps == 2
