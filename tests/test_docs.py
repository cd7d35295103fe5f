"""The README is a user's guide: short, free of history, and every link in it and in docs/ resolves."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
HASH = re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b")
ISSUE = re.compile(r"\b[Ii]ssues? \d+|#\d+\b")


def commits(text: str) -> list[str]:
    """The words of ``text`` that name a commit of this repository (a question id such as b3c15d39 does not)."""
    return [w for w in HASH.findall(text)
            if subprocess.run(["git", "cat-file", "-e", f"{w}^{{commit}}"], cwd=ROOT, capture_output=True).returncode == 0]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    return {slug(m.group(1)) for m in re.finditer(r"^#+ (.+)$", page.read_text(encoding="utf-8"), re.M)}


def test_slug_follows_github():
    assert slug("Your own system, your own benchmark") == "your-own-system-your-own-benchmark"
    assert slug("Runs at scale: workers, limits, cost, Ray") == "runs-at-scale-workers-limits-cost-ray"


def test_readme_is_a_short_guide_without_history():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 300
    assert not commits(text), commits(text)
    assert not ISSUE.findall(text), ISSUE.findall(text)


def broken_links(page: Path) -> list[str]:
    """Relative links of ``page`` whose file is missing or whose ``#anchor`` names no heading there."""
    broken = []
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):  # http:, mailto: ... are not checked offline
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists() or (anchor and dest.suffix == ".md" and anchor not in anchors(dest)):
            broken.append(target)
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_resolves(page):
    assert not broken_links(page)


def test_link_check_catches_a_broken_link(tmp_path):
    page = tmp_path / "a.md"
    page.write_text("# Title\n[ok](#title) [bad](missing.md) [bad anchor](#nope) [web](https://x.org)\n",
                    encoding="utf-8")
    assert broken_links(page) == ["missing.md", "#nope"]
