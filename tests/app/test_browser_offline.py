"""The real app in headless Chromium asks nothing of another machine (issue 30, item 3).

Every page is visited and used as ``scripts/browser_check.py``'s ``check`` does (Run all on Trace
and Demo, a Failures row opening Trace, a label saved on Annotate), then Evaluate, while every request and WebSocket
the browser opens is recorded; the URLs the DOM loads (icons, styles, images,
frames) at the end are read too, because headless Chromium may skip a favicon a desktop browser fetches.
None may name a host other than 127.0.0.1. Run alone with ``pytest -m browser``.
"""

import importlib.util
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="needs /usr/bin/chromium"),
    pytest.mark.skipif(importlib.util.find_spec("playwright") is None, reason="needs playwright"),
]


def test_foreign_is_told_apart(bc):
    urls = ["http://127.0.0.1:8501/_stcore/health", "ws://127.0.0.1:8501/_stcore/stream", "data:image/svg+xml;base64,AA",
            "https://fonts.gstatic.com/s/i/x/24px.svg", "blob:http://127.0.0.1:8501/x", "http://localhost:1/a"]
    assert bc.foreign(urls) == ["https://fonts.gstatic.com/s/i/x/24px.svg"]


def test_no_request_leaves_the_machine(bc, tmp_path):
    fake = not bc.pipeline_available()
    db = tmp_path / "store.duckdb"
    bc.build_store(db, fake=fake)
    log = tmp_path / "streamlit.log"
    with bc.serve(db, log=log, fake=fake) as (url, _), bc.browser() as page:
        asked = bc.record_requests(page)
        seen = bc.check(url, tmp_path / "shots", page)
        page.goto(url + "/evaluate")  # the one page check() does not visit
        page.get_by_text("The same run from a shell", exact=False).first.wait_for(timeout=120_000)
        bc.wait_idle(page)
        assert bc.exceptions(page) == []
        loaded = bc.loaded_urls(page)  # the page icon is set by app.py on every page, so the last one shows it
    assert all(not e for e in seen["errors"].values()), (seen["errors"], log.read_text()[-3000:])
    assert len(seen["pages"]) == 7 and any("/_stcore/stream" in u for u in asked)  # the pages were really used
    assert bc.foreign(asked) == [], bc.foreign(asked)
    assert bc.foreign(loaded) == [], bc.foreign(loaded)
