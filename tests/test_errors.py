"""bfr_core.errors: the one way messages list ids (a few, then how many more)."""

from __future__ import annotations

from bfr_core.errors import InputError, some


def test_some_lists_a_few_ids_then_how_many_more() -> None:
    assert some([]) == ""
    assert some(["a", "b"]) == "'a', 'b'"
    assert some([f"c{i}" for i in range(5)]) == "'c0', 'c1', 'c2', 'c3', 'c4'"
    assert some([f"c{i}" for i in range(5_002)]) == "'c0', 'c1', 'c2', 'c3', 'c4' and 4,997 more"
    assert some(["x", "y", "z"], limit=1) == "'x' and 2 more"


def test_input_error_names_file_record_and_field() -> None:
    assert str(InputError("f.json", "bad", record="line 3", field="gold")) == "f.json, record line 3, field 'gold': bad"
