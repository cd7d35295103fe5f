"""Suite-wide settings: a held store lock is retried for 2 s, not the commands' default 30 s, so the
tests that hold a lock on purpose stay quick (``bfr_core.duck.connect``)."""

import os

os.environ.setdefault("BFR_LOCK_WAIT_S", "2")
