"""The real app in headless Chromium: every page, "Run all" on the demo, one screenshot per page, and no
request to another host on any of them; a Failures row opening Trace; Annotate on a store with no run; the
Demo on a store holding dev50.

Starts ``streamlit run app.py`` on a free localhost port against a temporary demo store (with a
finished eval run) and drives Debian's /usr/bin/chromium with Playwright's Python API; screenshots
go to docs/screenshots/<page>.png. Uses the pipeline stand-in of conftest.py until the real arms
are importable. Run alone with ``pytest -m browser``. The dev50 check needs a store holding
LongMemEval dev50: ``$BFR_DEV50_STORE``, else the one bench/speed/bench_app_ingest.py kept (its path is
in bench/out/app_ingest.json); skipped when neither exists.
"""

import importlib.util
import json
import os
import re
import shutil
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


def test_every_page_in_chromium(bc, tmp_path):
    """Every page used as ``scripts/browser_check.py``'s ``check`` does, then Evaluate, while every request
    and WebSocket the browser opens is recorded, and the URLs the DOM loads at the end are read (headless
    Chromium may skip a favicon a desktop browser fetches): none may name a host other than 127.0.0.1."""
    fake = not bc.pipeline_available()
    db = tmp_path / "store.duckdb"
    info = bc.build_store(db, fake=fake)
    assert info["run"], info
    out = ROOT / "docs" / "screenshots"
    with bc.serve(db, log=tmp_path / "streamlit.log", fake=fake) as (url, _), bc.browser() as page:
        asked = bc.record_requests(page)
        seen = bc.check(url, out, page)
        page.goto(url + "/evaluate")  # the one page check() does not visit
        page.get_by_text("The same run from a shell", exact=False).first.wait_for(timeout=120_000)
        bc.wait_idle(page)
        assert bc.exceptions(page) == []
        loaded = bc.loaded_urls(page)  # the page icon is set by app.py on every page, so the last one shows it
    assert seen["errors"] == {p: [] for p in (*PAGES, "failures_to_trace")}, \
        (tmp_path / "streamlit.log").read_text()[-3000:]
    assert len(seen["pages"]) == 7 and any("/_stcore/stream" in u for u in asked)  # the pages were really used
    assert bc.foreign(asked) == [], bc.foreign(asked)
    assert bc.foreign(loaded) == [], bc.foreign(loaded)
    assert "Reference answer" in seen["failures_to_trace"]  # a Failures row opened Trace
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
    # the paper's point, offline, under the recorded model decomposition the page names
    assert "recorded decomposition of local" in seen["demo_source"], seen["demo_source"]
    if not fake:
        point = "\n".join(seen["demo_point"])
        assert "No gold turn satisfies every requirement alone" in point, point
        assert "holds 2 of 2 gold turns, so the requirements need both" in point, point


def test_annotate_with_no_run(bc, tmp_path):
    from bfr_core.ingest.demo import ensure_demo_store

    db = tmp_path / "norun.duckdb"
    ensure_demo_store(db, embed=False).close()
    out = ROOT / "docs" / "screenshots"
    with bc.serve(db, log=tmp_path / "streamlit.log") as (url, _), bc.browser() as page:
        seen = bc.check_annotate_no_run(url, out, page)
    assert seen["errors"] == [], seen["errors"]
    assert f"bfr eval --db {db} --dataset demo" in seen["text"] and "--suff" in seen["text"]


def _dev50_store() -> Path | None:
    env = os.environ.get("BFR_DEV50_STORE")
    if env:
        return Path(env)
    bench = ROOT / "bench" / "out" / "app_ingest.json"
    kept = Path(json.loads(bench.read_text()).get("store", "")) if bench.exists() else None
    kept = kept if kept and kept.name else None
    return kept if kept and kept.exists() else None


@pytest.mark.skipif(_dev50_store() is None, reason="needs a store holding dev50 ($BFR_DEV50_STORE)")
def test_demo_on_a_store_holding_dev50(bc, tmp_path):
    from bfr_core.evaluation.cases import premise, view_ranks
    from bfr_core.store import Store

    db = tmp_path / "dev50.duckdb"
    shutil.copy(_dev50_store(), db)
    s = Store(db)
    ranks = view_ranks(s, "longmemeval", "b3c15d39")
    s.close()
    out = ROOT / "docs" / "screenshots"
    with bc.serve(db, log=tmp_path / "streamlit.log") as (url, _), bc.browser() as page:
        seen = bc.check_demo_real(url, out, page)
    assert seen["errors"] == [], seen["errors"]
    assert "LongMemEval question b3c15d39" in seen["text"]
    # what the page says about Figure 1's premise is what the store's own ranks say
    for p in premise(ranks, 10):
        assert ("the premise holds" if p.holds else "the premise fails") in seen["text"], p
    if not any(p.holds for p in premise(ranks, 10)):
        assert "Figure 1's premise does not hold" in seen["text"]
