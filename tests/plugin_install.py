"""Installs ``examples/bfr-example-arm`` with pip into a temporary folder (never into the shared venv,
whose packages ``scripts/check_lock.py`` pins), for the tests of the ``bfr.arms`` entry-point group."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "bfr-example-arm"
ARM = "example-recent"


def install_example(tmp: Path) -> Path:
    """``pip install`` the example package (a copy, so no build files land in the repository) into
    ``tmp/site``; returns that folder, to be put on ``sys.path`` / ``PYTHONPATH``."""
    src, site = tmp / "src", tmp / "site"
    shutil.copytree(EXAMPLE, src)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index",
                    "--target", str(site), str(src)], check=True, capture_output=True, timeout=600)
    return site
