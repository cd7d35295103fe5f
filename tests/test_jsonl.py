"""bfr_core.jsonl: where a JSON line ends, written and read."""

from __future__ import annotations

import json

from bfr_core.jsonl import LINE_BREAKS, dumps_line, split_lines


def test_a_line_keeps_its_text_and_survives_every_line_splitter():
    obj = {"note": "é\u2028\u2029\u0085 \n end", "n": 1}
    line = dumps_line(obj)
    assert line.endswith("\n") and line.count("\n") == 1 and "é" in line  # readable, one line
    assert not set(LINE_BREAKS) & set(line) and len(line.splitlines()) == 1
    assert json.loads(line) == obj
    assert dumps_line({"d": object()}, default=lambda o: "x") == '{"d": "x"}\n'


def test_split_lines_ends_lines_at_newline_only():
    raw = json.dumps({"a": "x\u2028y"}, ensure_ascii=False) + "\r\n" + json.dumps({"b": 2}) + "\n"
    lines = [ln for ln in split_lines(raw) if ln.strip()]
    assert [json.loads(ln) for ln in lines] == [{"a": "x\u2028y"}, {"b": 2}]
    assert split_lines(b'{"a": 1}\n\xff\n') == [b'{"a": 1}', b"\xff", b""]  # bytes stay bytes
