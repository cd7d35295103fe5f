"""Suite-wide settings: a held store lock is retried for 2 s, not the commands' default 30 s, so the
tests that hold a lock on purpose stay quick (``bfr_core.duck.connect``); and every test leaves
``sys.modules["__main__"]`` as it found it (an AppTest script run in-process replaces it, and a spawned
worker process, ``evaluation.procpool``, would then re-run that script as its main)."""

import os
import sys

import pytest

os.environ.setdefault("BFR_LOCK_WAIT_S", "2")


@pytest.fixture(autouse=True)
def _keep_main_module():
    main = sys.modules.get("__main__")
    yield
    if main is not None:
        sys.modules["__main__"] = main
