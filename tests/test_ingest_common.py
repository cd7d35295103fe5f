"""Streaming a top-level JSON array (``common.JsonArray``): the items json.loads gives, and the same
guarantees as the whole-file reader (gzip, BOM, lone surrogates, nesting, errors naming the item)."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from bfr_core.errors import InputError
from bfr_core.ingest.common import MAX_DEPTH, JsonArray


def _items(path: Path) -> list[Any]:
    with JsonArray(path, "record") as src:
        assert src.is_array()
        return list(src.items())


def _write(tmp_path: Path, raw: bytes, name: str = "a.json") -> Path:
    p = tmp_path / name
    p.write_bytes(raw)
    return p


DATA = [{"a": 1, "b": [1.5, 1e5, -0.0, 10**30, True, None, "é😀"], "c": {"": [], "d": {}}}, 3, "x", [], {}]


@pytest.mark.parametrize("gz", [False, True])
def test_items_are_what_json_loads_gives(tmp_path: Path, gz: bool) -> None:
    raw = json.dumps(DATA).encode()
    p = _write(tmp_path, gzip.compress(raw, mtime=0) if gz else raw)
    got = _items(p)
    assert got == json.loads(raw)
    assert [type(x) for x in got[0]["b"]] == [float, float, float, int, bool, type(None), str]  # no Decimal
    with JsonArray(p) as src:
        list(src.items())
        assert src.sha256() == hashlib.sha256(p.read_bytes()).hexdigest()
        assert src.done == src.size == p.stat().st_size


def test_bom_and_whitespace(tmp_path: Path) -> None:
    assert _items(_write(tmp_path, b"\xef\xbb\xbf \n[1, 2]\n")) == [1, 2]
    with pytest.raises(InputError, match="file is empty"):
        _items(_write(tmp_path, b" \n\t"))


def test_not_an_array(tmp_path: Path) -> None:
    for raw in (b'{"a": [1]}', b'"text"', b"7"):
        with JsonArray(_write(tmp_path, raw)) as src:
            assert not src.is_array()


@pytest.mark.parametrize(
    ("raw", "record", "text"),
    [
        (b'[{"a": 1}, {"a": 2}, {"a": }]', "record 2", "malformed JSON in bytes 18-29 of the JSON text"),
        (b'[{"a": 1}, {"a": 2', "record 1", "at byte 18, the end"),
        (b"[1, 2] [3]", None, "after the top-level array"),
        (b"[1, NaN]", "record 1", "malformed JSON"),
    ],
)
def test_malformed_names_item_and_bytes(tmp_path: Path, raw: bytes, record: str | None, text: str) -> None:
    p = _write(tmp_path, raw)
    with pytest.raises(InputError) as err:
        _items(p)
    assert err.value.record == record and text in str(err.value) and str(p) in str(err.value)
    assert "\n" not in str(err.value)


def test_invalid_utf8_and_cut_gzip(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="malformed JSON"):
        _items(_write(tmp_path, b'["ok", "\xff"]'))
    whole = gzip.compress(json.dumps([{"x": "y" * 50_000, "n": i} for i in range(40)]).encode(), mtime=0)
    with pytest.raises(InputError, match="gzip data is truncated or corrupt"):
        _items(_write(tmp_path, whole[: len(whole) // 2], "cut.json.gz"))


def test_nesting_past_the_limit_is_refused(tmp_path: Path) -> None:
    ok = b"[" + b"[" * (MAX_DEPTH - 1) + b"]" * (MAX_DEPTH - 1) + b"]"
    assert len(_items(_write(tmp_path, ok))) == 1
    deep = b"[1, " + b"[" * 200_000 + b"]" * 200_000 + b"]"  # ijson's items() alone ran out of memory here
    with pytest.raises(InputError, match="nested too deeply") as err:
        _items(_write(tmp_path, deep))
    assert err.value.record == "record 1"


@pytest.mark.parametrize("at", [65536 - k for k in range(-2, 16)])
def test_surrogates_across_read_boundaries(tmp_path: Path, at: int) -> None:
    """The parser reads 64 KiB at a time: a pair split by a read is whole, a lone half is refused."""
    def file(escape: str) -> Path:
        head = '["' + "a" * (at - 2)  # the escape starts at byte ``at``
        return _write(tmp_path, f'{head}{escape}b"]'.encode())

    assert _items(file("\\ud83d\\ude00")) == ["a" * (at - 2) + "😀b"]
    for lone in ("\\ud83dx", "\\ude00", "\\ude00\\ud83d"):
        with pytest.raises(InputError, match=f"byte {at:,} of the JSON text: .* half of a UTF-16 surrogate pair"):
            _items(file(lone))


def test_gzip_bomb_limit_applies_to_gunzipped_text_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from bfr_core.ingest import common

    monkeypatch.setattr(common, "MAX_INPUT_BYTES", 1 << 16)
    raw = json.dumps(["x" * 1000] * 200).encode()
    assert len(_items(_write(tmp_path, raw))) == 200  # a plain file: no limit
    with pytest.raises(InputError, match="input limit"):
        _items(_write(tmp_path, gzip.compress(raw, mtime=0), "b.json.gz"))


@pytest.mark.parametrize("sep", ["\u2028", "\u2029", "\u0085"])
def test_jsonl_lines_end_at_newline_only(tmp_path: Path, sep: str) -> None:
    """Characters ``str.splitlines`` breaks at are ordinary inside a JSON string (json.dumps writes them)."""
    from bfr_core.ingest.common import iter_jsonl

    rows = [{"text": f"one{sep}two"}, {"text": "three"}]
    p = _write(tmp_path, ("\r\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n").encode(), "a.jsonl")
    assert [obj for _, obj in iter_jsonl(p)] == rows
    assert [n for n, _ in iter_jsonl(p)] == [1, 2]


@pytest.mark.parametrize("raw, why", [(b'{"a": NaN}', "NaN is not JSON"), (b'{"a": -Infinity}', "-Infinity is not JSON"),
                                      (b'{"a": 1e999}', "beyond a double's range")])
def test_whole_file_and_jsonl_refuse_what_json_does_not_allow(tmp_path: Path, raw: bytes, why: str) -> None:
    from bfr_core.ingest.common import iter_jsonl, load_json

    with pytest.raises(InputError, match=why):
        load_json(_write(tmp_path, raw))
    with pytest.raises(InputError, match=why) as err:
        list(iter_jsonl(_write(tmp_path, b'{"a": 1}\n' + raw + b"\n", "a.jsonl")))
    assert "line 2" in str(err.value)
    assert load_json(_write(tmp_path, b'{"a": 1e308, "b": -2.5e-300}', "ok.json")) == {"a": 1e308, "b": -2.5e-300}
