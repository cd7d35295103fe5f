"""``app_as_frame(monkeypatch)``: lets AppTest run app.py as the ``st.navigation`` frame it is.

AppTest resets ``PagesManager.uses_pages_directory`` before each run; the app names its pages
itself, so the flag is cleared again after every construction (see tests/app/conftest.py).
"""

from __future__ import annotations

from typing import Any


def app_as_frame(monkeypatch: Any) -> None:
    from streamlit.runtime import pages_manager as pm

    original = pm.PagesManager.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        pm.PagesManager.uses_pages_directory = False

    monkeypatch.setattr(pm.PagesManager, "__init__", init)
