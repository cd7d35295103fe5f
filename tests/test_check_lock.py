"""scripts/check_lock.py: the installed versions against requirements.lock."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import check_lock  # noqa: E402


def test_compare_lists_differences_unlocked_and_missing():
    lock = {"duckdb": "2.0.1", "streamlit": "1.67.0", "ray": "2.60.0"}
    have = {"duckdb": "2.0.0", "streamlit": "1.67.0", "requests": "2.32.0", "pip": "26.3"}
    differ, unlocked, missing = check_lock.compare(lock, have)
    assert differ == ["duckdb: installed 2.0.0, lock 2.0.1"]
    assert unlocked == ["requests==2.32.0"]  # pip is not checked
    assert missing == ["ray==2.60.0"]


def test_names_are_compared_canonically_and_pins_must_be_exact(tmp_path):
    lock = tmp_path / "l.lock"
    lock.write_text("# comment\nLlama_CPP.python==0.3.36\n\n", encoding="utf-8")
    assert check_lock.read_lock(lock) == {"llama-cpp-python": "0.3.36"}
    lock.write_text("duckdb>=2\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="not an exact pin"):
        check_lock.read_lock(lock)


def test_main_fails_naming_the_package_whose_version_differs(tmp_path, capsys):
    have = check_lock.installed()
    pins = {n: v for n, v in have.items() if n not in check_lock.SKIP}
    lock = tmp_path / "requirements.lock"
    lock.write_text("".join(f"{n}=={v}\n" for n, v in sorted(pins.items())), encoding="utf-8")
    assert check_lock.main(["--lock", str(lock)]) == 0
    pins["duckdb"] = "0.0.1"
    lock.write_text("".join(f"{n}=={v}\n" for n, v in sorted(pins.items())), encoding="utf-8")
    assert check_lock.main(["--lock", str(lock)]) == 1
    assert f"duckdb: installed {have['duckdb']}, lock 0.0.1" in capsys.readouterr().err


def test_the_committed_lock_pins_what_the_install_needs():
    pins = check_lock.read_lock(ROOT / "requirements.lock")
    assert pins["duckdb"] == "2.0.1" and pins["torch"].startswith("2.13.0")
    for name in ("streamlit", "sentence-transformers", "pytest", "playwright", "authlib", "llama-cpp-python"):
        assert name in pins, name
