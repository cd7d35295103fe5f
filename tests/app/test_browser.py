"""The real app in headless Chromium: every page, "Run all" on the demo, one screenshot per page.

Starts ``streamlit run app.py`` on a free localhost port against a temporary demo store (with a
finished eval run) and drives Debian's /usr/bin/chromium with Playwright's Python API; screenshots
go to docs/screenshots/<page>.png. Uses the pipeline stand-in of conftest.py until the real arms
are importable. Run alone with ``pytest -m browser``.
"""

import importlib.util
import re
import sys
from pathlib import Path

import pytest

from bfr_core.pipeline import arm_names

ROOT = Path(__file__).resolve().parents[2]
PAGES = ("home", "data", "trace", "demo", "failures", "annotate")

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="needs /usr/bin/chromium"),
    pytest.mark.skipif(importlib.util.find_spec("playwright") is None, reason="needs playwright"),
]


@pytest.fixture(scope="module")
def bc():
    sys.path.insert(0, str(ROOT / "scripts"))
    import browser_check

    return browser_check


def test_every_page_in_chromium(bc, tmp_path):
    fake = not bc.pipeline_available()
    db = tmp_path / "store.duckdb"
    info = bc.build_store(db, fake=fake)
    assert info["run"], info
    out = ROOT / "docs" / "screenshots"
    with bc.serve(db, log=tmp_path / "streamlit.log", fake=fake) as (url, _), bc.browser() as page:
        seen = bc.check(url, out, page)
    assert seen["errors"] == {p: [] for p in PAGES}, (tmp_path / "streamlit.log").read_text()[-3000:]
    for p in PAGES:
        assert (out / f"{p}.png").stat().st_size > 10_000
    assert seen["trace_final"].startswith("Final evidence set")
    blind = seen.get("annotate_blind", "")
    assert "Reference answer" in blind
    for arm in arm_names():
        assert not re.search(rf"(?<![\w-]){re.escape(arm)}(?![\w-])", blind), arm
    # "Run all" on the demo: both evidence turns (order and arrival) end in BFR-MV's set
    held = re.search(r"holds (\d) of (\d) gold turns", seen["demo_success"])
    assert held, seen["demo_success"]
    assert held.group(1) == held.group(2), seen["demo_success"]
