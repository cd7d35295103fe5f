"""The real app in headless Chromium on a store other than the default (issue 29, first finding).

The server starts on the demo store; the user types another store's path in the sidebar (the
README's ``--db bfr.duckdb`` case), whose question texts carry a mark. A Failures row, Failures'
"Open in Trace" and the Demo gallery's row must each open Trace on that store: its question, and
the sidebar still naming it. They opened the default store (Streamlit drops widget state on
``st.switch_page``). Run alone with ``pytest -m browser``.
"""

import importlib.util
import shutil
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="needs /usr/bin/chromium"),
    pytest.mark.skipif(importlib.util.find_spec("playwright") is None, reason="needs playwright"),
]
MARK = "OTHERSTORE"


def test_row_clicks_keep_a_non_default_store(bc, tmp_path):
    from bfr_core.store import Store

    fake = not bc.pipeline_available()
    default, other = tmp_path / "default.duckdb", tmp_path / "other.duckdb"
    bc.build_store(default, fake=fake)
    shutil.copy(default, other)
    s = Store(other)
    s.con.execute(f"UPDATE questions SET text = '{MARK} ' || text")
    s.con.execute("CHECKPOINT")
    s.close()
    log = tmp_path / "streamlit.log"
    with bc.serve(default, log=log, fake=fake) as (url, _), bc.browser() as page:
        seen = bc.check_store_carried(url, page, other)
    assert seen["errors"] == [], log.read_text()[-3000:]
    assert "demo_gallery" in seen, "the Demo gallery has no row to click on this store"
    for how in ("failures_row", "open_in_trace", "demo_gallery"):
        text, store = seen[how]
        assert store == str(other), how
        assert MARK in text, (how, text[:1500])
