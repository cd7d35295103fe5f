"""The app under streamlit's AppTest, as the app benches open it: :func:`app_test` (app.py on a
given store, in st.navigation mode as tests/app/conftest.py sets it) and :func:`timed` (seconds, rounded,
and the result of a call).

Does not cover: the pages' own assertions (each bench checks what it measures).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

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
