"""`improvements --version`, CHANGELOG.md and the tags tell one story.

A release is a tag `vX.Y.Z` and an entry `## X.Y.Z (date)` in CHANGELOG.md, made together
(CONTRIBUTING.md, "A release"); the version comes from the tags (setuptools-scm). So the
version never sorts below a release the changelog claims: a claimed release without its tag,
or a clone whose tags did not travel, gives a development version below it, and fails here.
"""

from __future__ import annotations

import re

from packaging.version import InvalidVersion, Version

from conftest import REPO, run_cli

CHANGELOG = REPO / "CHANGELOG.md"
START = "<!-- towncrier release notes start -->"
# The one entry that is not a release: the work before the first tag.
NOT_A_RELEASE = re.compile(r"^## Before the first release \(.*, not tagged\)$")
RELEASE = re.compile(r"^## (?P<version>\S+) \((?P<date>\d{4}-\d{2}-\d{2})\)$")


def claimed_releases(text: str) -> list[Version]:
    """The versions the changelog's entries claim as released; every entry is one or says it is none."""
    claimed: list[Version] = []
    for line in text.split(START, 1)[1].splitlines():
        if not line.startswith("## ") or NOT_A_RELEASE.match(line):
            continue
        m = RELEASE.match(line)
        assert m is not None, f"CHANGELOG.md: `{line}` is neither `## X.Y.Z (YYYY-MM-DD)` nor the untagged entry"
        try:
            version = Version(m["version"])
        except InvalidVersion:
            raise AssertionError(f"CHANGELOG.md: `{m['version']}` is not a version") from None
        assert not version.is_devrelease and not version.local, f"CHANGELOG.md claims a development version: {line}"
        claimed.append(version)
    return claimed


def installed_version() -> Version:
    run = run_cli("--version")
    assert run.returncode == 0, run.stderr
    m = re.fullmatch(r"improvements, version (\S+)\n", run.stdout)
    assert m is not None, run.stdout
    return Version(m[1])


def test_the_version_never_sorts_below_a_release_the_changelog_claims() -> None:
    version = installed_version()
    for release in claimed_releases(CHANGELOG.read_text()):
        assert version >= release, (
            f"improvements --version is {version}, below {release}, which CHANGELOG.md claims as released: "
            f"tag the release (v{release}) where CI sees it, or do not claim it"
        )


def test_the_check_fails_on_a_release_without_its_tag() -> None:
    # What the changelog said before the first tag: a 0.1.0 "released" while --version is 0.1.devN.
    text = f"# Changelog\n\n{START}\n\n## 0.1.0 (2026-12-01)\n\n### Features\n\n- x\n"
    assert claimed_releases(text) == [Version("0.1.0")]
    assert Version("0.1.dev469+g0123456") < Version("0.1.0")
    assert claimed_releases(f"{START}\n\n## Before the first release (up to commit 13ef378, not tagged)\n") == []
