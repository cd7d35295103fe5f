"""The real app in headless Chromium asks nothing of another machine, whatever a name holds.

A dataset named to inject an image, a tag and a link, and a crafted ``?store=`` link: every page renders
them as text while every request and WebSocket the browser opens is recorded, and the URLs the DOM loads
are read too; none may name a host other than 127.0.0.1 (``tests/app/test_browser.py`` holds the same
check over every page of a store with a finished run). Run alone with ``pytest -m browser``.
The hostile-names test records its counts (pages, requests, foreign requests and loaded URLs) in the
JSON file ``BFR_RELIABILITY_STATS`` names (``browser_offline``), for ``bench/checks/bench_reliability.py``.
"""

import importlib.util
import json
import os
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="needs /usr/bin/chromium"),
    pytest.mark.skipif(importlib.util.find_spec("playwright") is None, reason="needs playwright"),
]


STATS: dict[str, int] = {}


@pytest.fixture(scope="module", autouse=True)
def _stats():
    """Counts for bench/checks/bench_reliability.py (``BFR_RELIABILITY_STATS`` names the JSON file)."""
    yield
    path = os.environ.get("BFR_RELIABILITY_STATS")
    if path and STATS:
        p = Path(path)
        data = json.loads(p.read_text(encoding="utf-8")) if p.exists() else {}
        data["browser_offline"] = STATS
        p.write_text(json.dumps(data, indent=2), encoding="utf-8")


def test_foreign_is_told_apart(bc):
    urls = ["http://127.0.0.1:8501/_stcore/health", "ws://127.0.0.1:8501/_stcore/stream", "data:image/svg+xml;base64,AA",
            "https://fonts.gstatic.com/s/i/x/24px.svg", "blob:http://127.0.0.1:8501/x", "http://localhost:1/a"]
    assert bc.foreign(urls) == ["https://fonts.gstatic.com/s/i/x/24px.svg"]


HOST = "198.51.100.7"  # TEST-NET-2: a request there would be one leaving the machine
HOSTILE = f"x`![i](http://{HOST}/d.png)` <img src=http://{HOST}/t.png> [a](http://{HOST}/l)"
# a path keeps no "//"; a browser reads "http:/\\host" as "http://host"
CRAFTED = f"![i](http:/\\{HOST}/s.png)"


def test_hostile_names_fetch_nothing(bc, tmp_path):
    """A dataset named to inject an image, a tag and a link, and a crafted ``?store=`` link: every page
    renders them as text, and the browser asks nothing of another host."""
    import urllib.parse

    from bfr_core.ingest import ingest
    from bfr_core.ingest.demo import demo_file, ensure_demo_store

    db = tmp_path / "store.duckdb"
    s = ensure_demo_store(db, embed=False)  # no run: Home and Annotate show eval commands naming every dataset
    ingest(s, "jsonl", demo_file(), name=HOSTILE, embed=False)
    s.con.execute("CHECKPOINT")
    s.close()
    crafted = urllib.parse.quote(str(tmp_path / CRAFTED / "x.duckdb"))
    with bc.serve(db, log=tmp_path / "streamlit.log", fake=True) as (url, _), bc.browser() as page:
        asked = bc.record_requests(page)
        loaded = []
        for path in ("/?store=" + crafted, "/", "/data", "/trace", "/demo", "/evaluate", "/failures", "/annotate"):
            page.goto(url + path)
            page.wait_for_selector('[data-testid="stMain"]', timeout=120_000)
            bc.wait_idle(page, timeout=120_000)
            assert bc.exceptions(page) == [], path
            loaded += bc.loaded_urls(page)
            if path.startswith("/?store="):
                assert "No store at" in bc.main_text(page)
            STATS["hostile_pages"] = STATS.get("hostile_pages", 0) + 1
    STATS.update(hostile_requests=len(asked), hostile_loaded_urls=len(loaded),
                 foreign_requests=len(bc.foreign(asked)), foreign_loaded_urls=len(bc.foreign(loaded)))
    assert any("/_stcore/stream" in u for u in asked)
    assert bc.foreign(asked) == [], bc.foreign(asked)
    assert bc.foreign(loaded) == [], bc.foreign(loaded)
