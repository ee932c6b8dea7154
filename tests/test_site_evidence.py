"""Evidence on the built site, and the same site built with Zensical: real builds of a campaign copy."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from generator.site.plugin import embed_charts

from conftest import FIXTURES, copy_campaign, run_cli

DEEPSEEK = FIXTURES / "provenance" / "deepseek-h200-decode.jsonl"
GLM_2026 = FIXTURES / "import" / "sglang-bench-serving-2026.jsonl"
SECRETS = (b"sk-prov-SYNTHETIC-1234abcd", b"sk-live-SYNTHETIC-7f3a9c1e55d2", b"adm-SYNTHETIC-0b4e8d2f")


def campaign_with_runs(dest: Path) -> Path:
    root = copy_campaign(dest, with_docs=True)
    for args in ((str(DEEPSEEK), "--record", "02"), (str(GLM_2026), "--baseline")):
        proc = run_cli("import", "--root", str(root), *args)
        assert proc.returncode == 0, proc.stderr
    # A file dropped under results/raw/ by hand, never imported: it must not be published.
    (root / "results" / "raw" / "by-hand.json").write_text('{"api_key": "sk-by-hand-SYNTHETIC"}\n')
    return root


def _check_published(site: Path, root: Path) -> None:
    raw = {p.name: p.read_bytes() for p in (site / "results" / "raw").iterdir()}
    kept = {p.name: p.read_bytes() for p in (root / "results" / "raw").iterdir() if p.name != "by-hand.json"}
    assert raw == kept
    for data in raw.values():
        assert not any(secret in data for secret in SECRETS)
    page = next((site / "improvements").glob("*-02-*.html")).read_text()
    links = re.findall(r'href="(\.\./results/raw/[^"]+)"', page)
    assert links, "the record page links its raw file"
    for link in links:
        target = (site / "improvements" / link).resolve()
        assert target.is_file()
        assert hashlib.sha256(target.read_bytes()).hexdigest() in page
    run_id = next(p.stem for p in (root / "results" / "runs").glob("sglang-serving-c32-*.json"))
    assert f'id="run-{run_id}"' in page and f'href="#run-{run_id}"' in page


@pytest.mark.mkdocs
def test_build_site_publishes_the_kept_raw_files_and_links_them(tmp_path: Path) -> None:
    root = campaign_with_runs(tmp_path / "repo")
    proc = run_cli("build", "--site", "--quiet", cwd=root)
    assert proc.returncode == 0, proc.stderr
    _check_published(root / "site", root)
    assert not (root / "site" / "results" / "raw" / "by-hand.json").exists()


@pytest.mark.mkdocs
def test_zensical_builds_the_same_site_from_a_two_line_mkdocs_yml(tmp_path: Path) -> None:
    pytest.importorskip("zensical")
    root = campaign_with_runs(tmp_path / "repo")
    (root / "mkdocs.yml").write_text("site_name: Zensical check\nplugins: [improvements]\n")
    docs_before = {p: p.read_bytes() for p in (root / "docs").rglob("*") if p.is_file()}
    proc = run_cli("build", "--zensical", "--quiet", cwd=root)
    assert proc.returncode == 0, proc.stderr
    site = root / "site"
    assert (site / ".improvements-site").is_file()
    for page in ("index.html", "summary.html", "blockers.html", "tags.html", "stylesheets/improvements.css"):
        assert (site / page).is_file(), page
    home = (site / "index.html").read_text()
    # The navigation the plugin lays out, tier sections included, written where Zensical reads it.
    for tier in ("Tier 1", "Tier 2", "Tier 3"):
        assert tier in home
    assert "stylesheets/improvements.css" in home
    _check_published(site, root)
    # Nothing was written into docs/ beyond the normal render (the render ran before: same bytes).
    rebuilt = {p: p.read_bytes() for p in (root / "docs").rglob("*") if p.is_file()}
    assert set(rebuilt) >= set(docs_before)
    assert not (root / "docs" / "stylesheets").exists() and not (root / "docs" / "results").exists()


@pytest.mark.mkdocs
def test_zensical_refuses_a_folder_it_did_not_build(tmp_path: Path) -> None:
    pytest.importorskip("zensical")
    root = copy_campaign(tmp_path / "repo", with_docs=True)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep\n")
    proc = run_cli("build", "--zensical", "--site-dir", str(mine), "--quiet", cwd=root)
    assert proc.returncode == 2 and "not empty" in proc.stderr
    assert (mine / "notes.txt").read_text() == "keep\n"


def test_site_and_zensical_together_are_refused(campaign: Path) -> None:
    proc = run_cli("build", "--site", "--zensical", cwd=campaign)
    assert proc.returncode == 2 and "give one" in proc.stderr


def test_charts_become_objects_with_the_image_as_fallback() -> None:
    html = '<p><img alt="Gain per record" src="../plots/summary-gains.svg" /></p><img alt="x" src="photo.svg" />'
    out = embed_charts(html)
    assert out == (
        '<p><object class="improvements-chart" type="image/svg+xml" data="../plots/summary-gains.svg" role="img" '
        'aria-label="Gain per record"><img alt="Gain per record" src="../plots/summary-gains.svg" /></object></p>'
        '<img alt="x" src="photo.svg" />'
    )


def test_generated_charts_hold_no_script(tmp_path: Path) -> None:
    """Charts are embedded as documents (<object>), where a script would run: ours never hold one."""
    root = campaign_with_runs(tmp_path / "repo")
    assert run_cli("build", "--quiet", cwd=root).returncode == 0
    charts = list((root / "docs").rglob("*.svg"))
    assert charts
    for chart in charts:
        text = chart.read_text()
        assert "<script" not in text.lower() and not re.search(r"\son[a-z]+\s*=", text), chart
        assert not re.search(r"(?:xlink:)?href\s*=\s*[\"'](?!#)", text), chart
