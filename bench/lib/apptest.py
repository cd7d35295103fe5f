"""The app under streamlit's AppTest, as the app benches open it: :func:`app_test` (app.py on a
given store, in st.navigation mode as tests/app/conftest.py sets it) and :func:`timed` (seconds, rounded,
and the result of a call); :func:`page_times`: warm opens of a page, then clicks of one of its buttons.

Does not cover: the pages' own assertions (each bench checks what it measures).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def timed(fn) -> tuple[float, object]:
    t0 = time.perf_counter()
    out = fn()
    return round(time.perf_counter() - t0, 4), out


def app_test(db: Path):
    os.environ["BFR_STORE"] = str(db)
    from streamlit.runtime import pages_manager as pm
    from streamlit.testing.v1 import AppTest

    if not getattr(pm.PagesManager, "_bench_patched", False):  # st.navigation mode on every run (tests/app/conftest.py)
        original = pm.PagesManager.__init__

        def init(self, *a, **k):
            original(self, *a, **k)
            pm.PagesManager.uses_pages_directory = False

        pm.PagesManager.__init__ = init
        pm.PagesManager._bench_patched = True
    return AppTest.from_file(str(ROOT / "app.py"), default_timeout=1800)


def page_times(open_page: Callable[[Path], tuple[float, Any]], db: Path, button: str, *, opens: int = 3,
               clicks: int = 5) -> tuple[list[float], list[float], Any]:
    """Seconds of ``opens`` warm opens of a page (``open_page(db)``), then of ``clicks`` clicks of the button
    keyed ``button`` on the last one, each click's run free of exceptions; and that last AppTest."""
    warm = []
    for _ in range(opens):
        took, at = open_page(db)
        warm.append(took)
    saves = []
    for _ in range(clicks):
        t0 = time.perf_counter()
        at.button(key=button).click().run()
        saves.append(round(time.perf_counter() - t0, 3))
        assert not at.exception, [e.value for e in at.exception]
    return warm, saves, at
