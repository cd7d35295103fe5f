"""bfr_core.outfile: what a written output file looks like on disk (its checks: tests/test_reliability_cli.py)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from bfr_core.duck import connect, is_duckdb_file, not_a_store
from bfr_core.errors import BfrError
from bfr_core.outfile import write_output


def test_a_new_file_gets_the_usual_permissions_and_a_replaced_one_keeps_its_own(tmp_path: Path) -> None:
    new = write_output(tmp_path / "a.jsonl", "x\n")
    assert stat.S_IMODE(new.stat().st_mode) == 0o666 & ~_umask()  # not mkstemp's 0600
    old = tmp_path / "b.jsonl"
    old.write_text("old", encoding="utf-8")
    old.chmod(0o640)
    write_output(old, "new", force=True)
    assert old.read_text(encoding="utf-8") == "new" and stat.S_IMODE(old.stat().st_mode) == 0o640


def test_a_file_that_is_no_store_is_named_so(tmp_path: Path) -> None:
    other = tmp_path / "runs.jsonl"
    other.write_text('{"a": 1}\n', encoding="utf-8")  # DuckDB said "Cannot launch in-memory database" of this one
    assert not_a_store(other) and not not_a_store(tmp_path / "missing.duckdb")
    with pytest.raises(BfrError, match="runs.jsonl: it exists but is not a DuckDB store"):
        connect(str(other), read_only=True)
    empty = tmp_path / "empty.duckdb"
    empty.touch()
    assert not_a_store(empty)  # DuckDB opens no empty file either
    orphan = tmp_path / "gone.duckdb"
    (tmp_path / "gone.duckdb.wal").write_bytes(b"log")
    with pytest.raises(BfrError, match="gone.duckdb.wal is there without it"):
        connect(str(orphan))
    assert (tmp_path / "gone.duckdb.wal").read_bytes() == b"log" and not orphan.exists()
    store = tmp_path / "s.duckdb"
    connect(str(store)).close()
    assert is_duckdb_file(store) and not not_a_store(store)
    with pytest.raises(BfrError, match="is a DuckDB store"):
        write_output(store, "x", force=True)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_the_write_ahead_log_of_the_store_or_of_any_duckdb_file_is_refused(tmp_path: Path) -> None:
    from bfr_core.outfile import check_output

    store = tmp_path / "s.duckdb"
    connect(str(store)).close()
    for aim in (tmp_path / "s.duckdb.wal", tmp_path / "s.duckdb.wal" / "frontier.json"):
        with pytest.raises(BfrError, match="write-ahead log"):
            check_output(aim, option="--out", store=store, force=True)
        with pytest.raises(BfrError, match="write-ahead log"):
            check_output(aim, option="--out", force=True)  # named like a DuckDB file's log, no store given
    (tmp_path / "s.duckdb.wal").write_bytes(b"log")
    os.link(tmp_path / "s.duckdb.wal", tmp_path / "hard.jsonl")
    with pytest.raises(BfrError, match="the store"):
        check_output(tmp_path / "hard.jsonl", option="--out", store=store, force=True)
    assert check_output(tmp_path / "notes.wal", option="--out") == tmp_path / "notes.wal"  # no DuckDB file beside


def test_an_unwritable_folder_is_one_line_before_any_work(tmp_path: Path, monkeypatch) -> None:
    from bfr_core.outfile import check_output

    monkeypatch.setattr(os, "access", lambda path, mode: Path(path) != tmp_path)
    with pytest.raises(BfrError, match=r"--out .*a\.jsonl: cannot write in .* \(permission denied\)"):
        check_output(tmp_path / "sub" / "a.jsonl", option="--out")
