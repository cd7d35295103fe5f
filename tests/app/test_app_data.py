"""Data page: statistics, ingest from a path and from an upload, clear errors for bad files."""

import json
from pathlib import Path

import pytest
from conftest import app_test, texts

from bfr_core.ingest.sources import data_dir

SHARED_DATA = data_dir()


def _jsonl(path):
    recs = [
        {"type": "session", "session_id": "a1", "date": "2024-01-02T10:00", "scope": "x",
         "turns": [{"turn_id": "a1_1", "speaker": "Ann", "text": "I adopted a cat named *Miso*."},
                   {"turn_id": "a1_2", "speaker": "assistant", "text": "Lovely <b>name</b>!"}]},
        {"type": "question", "question_id": "x1", "scope": "x", "question": "What is my cat called?",
         "answer": "Miso", "qtype": "single-hop", "gold": ["a1_1"]},
    ]
    path.write_text("\n".join(json.dumps(r) for r in recs) + "\n", encoding="utf-8")
    return path


def test_statistics_of_the_demo_dataset(app_db):
    at = app_test().run()
    at.switch_page("pages/data.py").run()
    assert not at.exception
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Turns"] == "126" and metrics["Questions"] == "7" and metrics["Sessions"] == "7"
    assert len(at.get("plotly_chart")) == 1


def test_the_export_offers_the_file_and_its_command(app_db):
    at = app_test().run()
    at.switch_page("pages/data.py").run()
    assert len(at.get("download_button")) == 1
    code = [c.value for c in at.code]
    assert any("export-data demo" in c and c.endswith("--out demo.jsonl") for c in code), code
    at.checkbox(key="data_export_blind").check().run()
    assert not at.exception
    assert any(c.endswith("--out demo-blind.jsonl --blind") for c in (c.value for c in at.code))


def test_ingest_from_path_then_bad_file(app_db, tmp_path):
    at = app_test().run()
    at.switch_page("pages/data.py").run()
    at.text_input(key="data_path").input(str(_jsonl(tmp_path / "mini.jsonl"))).run()
    at.text_input(key="data_name").input("mini").run()
    at.checkbox(key="data_embed").uncheck().run()
    at.button(key="data_ingest").click().run()
    assert not at.exception
    assert any("Loaded" in s.value and "mini" in s.value for s in at.success)
    assert at.selectbox(key="data_dataset").options == ["demo", "mini"]
    # a second time: the page names the clash in its own words (no CLI flag) and offers the checkbox
    at.run()
    assert any("already in this store" in w.value and "Replace if present" in w.value for w in at.warning)
    assert "--replace" not in texts(at)
    assert at.button(key="data_ingest").disabled
    at.checkbox(key="data_replace").check().run()
    at.button(key="data_ingest").click().run()
    assert any("Loaded" in s.value and "mini" in s.value for s in at.success)
    at.checkbox(key="data_replace").uncheck().run()
    # the Home table shows the new dataset at once (cached frames were cleared)
    at.switch_page("pages/home.py").run()
    assert "mini" in list(at.dataframe[0].value["dataset"])
    at.switch_page("pages/data.py").run()
    # a file that is not JSON at all
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n", encoding="utf-8")
    at.text_input(key="data_path").input(str(bad)).run()
    at.text_input(key="data_name").input("bad").run()
    at.button(key="data_ingest").click().run()
    assert not at.exception
    assert at.error and "bad.jsonl" in at.error[0].value.replace("\\", "")  # shown escaped


def test_ingest_from_upload(app_db, tmp_path):
    at = app_test().run()
    at.switch_page("pages/data.py").run()
    at.radio(key="data_source").set_value("Upload a file").run()
    data = _jsonl(tmp_path / "up.jsonl").read_bytes()
    at.file_uploader(key="data_upload").set_value(("up.jsonl", data, "application/jsonl")).run()
    at.checkbox(key="data_embed").uncheck().run()
    at.button(key="data_ingest").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("Loaded" in s.value for s in at.success), texts(at)
    # a broken upload: the error names the uploaded file, not the temporary copy
    at.file_uploader(key="data_upload").set_value(("broken.jsonl", b"{not json\n", "application/jsonl")).run()
    at.text_input(key="data_name").input("broken").run()
    at.button(key="data_ingest").click().run()
    assert not at.exception
    assert at.error and "broken.jsonl" in at.error[0].value.replace("\\", "")
    assert "bfr-upload-" not in at.error[0].value, at.error[0].value


@pytest.mark.slow
@pytest.mark.skipif(not (SHARED_DATA / "locomo10.json").exists(), reason="needs ../shared/data/locomo10.json")
def test_ingest_the_shared_locomo_copy(app_db):
    at = app_test().run()
    at.switch_page("pages/data.py").run()
    at.radio(key="data_source").set_value("Shared copy (../shared/data)").run()
    at.selectbox(key="data_shared").select(SHARED_DATA / "locomo10.json").run()
    assert at.selectbox(key="data_kind_locomo").value == "locomo"
    at.checkbox(key="data_embed").uncheck().run()
    at.button(key="data_ingest").click().run(timeout=120)
    assert not at.exception, [e.value for e in at.exception]
    assert any("Loaded **locomo**" in s.value and "5882 turns" in s.value for s in at.success), texts(at)
    at.selectbox(key="data_dataset").select("locomo").run()
    assert {m.label: m.value for m in at.metric}["Questions"] == "1,986"


def _ingest_mini(at, path, *, name="mini"):
    at.text_input(key="data_path").input(str(path)).run()
    at.text_input(key="data_name").input(name).run()
    at.checkbox(key="data_embed").uncheck().run()
    at.button(key="data_ingest").click().run()


def test_no_cancel_left_after_an_ingest_ends(app_db, tmp_path):
    """Issue 29: the Cancel button stayed after the ingest ended and then said "nothing of that file
    was kept" beside the loaded dataset."""
    at = app_test().run()
    at.switch_page("pages/data.py").run()
    _ingest_mini(at, _jsonl(tmp_path / "mini.jsonl"))
    assert any("Loaded" in s.value for s in at.success)
    assert not [b for b in at.button if b.key == "data_cancel"]
    at.run()  # whatever the next click is
    assert "cancelled" not in texts(at).lower() and "nothing of that file" not in texts(at)
    # and after a failed ingest
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n", encoding="utf-8")
    _ingest_mini(at, bad, name="bad")
    assert at.error and not [b for b in at.button if b.key == "data_cancel"]
    at.run()
    assert "cancelled" not in texts(at).lower()


def test_a_stopped_ingest_says_what_it_left(app_db, tmp_path, monkeypatch):
    """A click while the ingest runs stops the script (Streamlit reruns); the next run says what is in
    the store, read from it: a new dataset is gone."""
    import streamlit as st

    import bfr_core.ingest as I

    def stopped(store, kind, path, progress=None, **kw):
        progress(1, 10, "reading the file")
        st.rerun()  # what a click during the run amounts to

    monkeypatch.setattr(I, "ingest", stopped)
    at = app_test().run()
    at.switch_page("pages/data.py").run()
    _ingest_mini(at, _jsonl(tmp_path / "mini.jsonl"))
    assert not at.exception, [e.value for e in at.exception]
    assert any("nothing of that file was kept ('mini' is not in the store)" in i.value.replace("\\", "")
               for i in at.info), texts(at)
    at.run()
    assert "cancelled" not in texts(at).lower()  # said once


def test_blank_question_is_warned_on_the_page(app_db, tmp_path):
    path = tmp_path / "blank.jsonl"
    path.write_text(_jsonl(tmp_path / "x.jsonl").read_text().replace('"Miso"', '""'), encoding="utf-8")
    at = app_test().run()
    at.switch_page("pages/data.py").run()
    _ingest_mini(at, path, name="blank")
    assert any("blank" in w.value and "answer" in w.value for w in at.warning), texts(at)


def test_stopped_message():
    from ui.ingesting import stopped_message

    old = {"ingested_at": 1}
    assert "nothing of that file was kept" in stopped_message("d", None, None)
    assert "is in the store" in stopped_message("d", None, {"ingested_at": 2})
    assert "is as it was" in stopped_message("d", old, {"ingested_at": 1})
    assert "replaced the old one" in stopped_message("d", old, {"ingested_at": 2})


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "byo"  # hand-made, no benchmark data


def test_ingest_beam_and_locomo_plus_then_listed(app_db):
    """The new kinds load from a path (kind guessed from the name) and are listed on Data and Home."""
    at = app_test().run()
    at.switch_page("pages/data.py").run()
    at.text_input(key="data_path").input(str(FIXTURES / "beam")).run()
    assert at.selectbox(key="data_kind_beam").value == "beam"
    at.checkbox(key="data_embed").uncheck().run()
    at.button(key="data_ingest").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("Loaded **beam**" in s.value and "4 turns" in s.value and "(1 scoreable)" in s.value
               for s in at.success), texts(at)
    at.text_input(key="data_path").input(str(FIXTURES / "locomo_plus_mini.json")).run()
    assert at.selectbox(key="data_kind_locomo-plus").value == "locomo-plus"
    at.text_input(key="data_locomo").input(str(FIXTURES / "locomo_mini.json")).run()
    at.button(key="data_ingest").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("Loaded **locomo\\-plus**" in s.value and "2 questions" in s.value for s in at.success), texts(at)
    assert at.selectbox(key="data_dataset").options == ["beam", "demo", "locomo-plus"]
    assert at.radio(key="data_stitch").value == "session"  # the benchmark's own placement unless asked
    at.text_input(key="data_name").input("plus-embedded").run()
    at.radio(key="data_stitch").set_value("embedded").run()
    at.button(key="data_ingest").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert "EMBEDDED" in texts(at)  # the report says it is not the benchmark's stitching
    at.text_input(key="data_name").input("").run()
    at.selectbox(key="data_dataset").select("beam").run()
    assert "kind beam" in texts(at)
    at.switch_page("pages/home.py").run()
    home = at.dataframe[0].value
    assert dict(zip(home["dataset"], home["kind"], strict=True)) == {
        "demo": "jsonl", "beam": "beam", "locomo-plus": "locomo-plus", "plus-embedded": "locomo-plus"}


def test_a_dataset_written_without_vectors_says_so_and_computes_the_rest(app_db, monkeypatch):
    """Issue 26: the demo store is written without vectors; the page says how many texts have them and
    offers "Compute the rest now" (the same cache stage as an ingest) and the shell line that does it."""
    from conftest import cache_all_vectors

    import bfr_core.retrieval.embed as E
    from bfr_core.store import Store
    from ui.commands import finish_cmd

    def fake_finish(store, dataset_id, progress=None):  # the real one loads MiniLM
        progress(1, 2, "encoding short turns (MiniLM) · 1 of 2 texts")
        return cache_all_vectors(store, dataset_id)

    monkeypatch.setattr(E, "finish_embeddings", fake_finish)
    at = app_test().run()
    at.switch_page("pages/data.py").run()
    body = texts(at)
    assert "Dense vectors: static word vectors 0 of 126 turn texts" in body, body
    assert "The 126 without them are computed on each conversation's or haystack's first use" in body
    assert "Names (entity view): 0 of 126 turn texts parsed" in body
    store = Store(app_db, read_only=True)
    d = store.dataset("demo")
    store.close()
    assert [c.value for c in at.code][0] == finish_cmd(str(app_db), "jsonl", d["source"], "demo")
    at.button(key="data_finish").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("every turn text of **demo** has them now" in s.value for s in at.success), texts(at)
    assert not [b for b in at.button if b.key == "data_cancel"]
    at.run()
    assert "static word vectors 126 of 126 turn texts" in texts(at)
    assert not [b for b in at.button if b.key == "data_finish"] and not [c for c in at.code if " ingest " in c.value]


def test_a_stopped_compute_says_what_is_kept(app_db, monkeypatch):
    import streamlit as st

    import bfr_core.retrieval.embed as E

    def stopped(store, dataset_id, progress=None):
        progress(1, 10, "encoding all turns (static word vectors)")
        st.rerun()  # what a click during the run amounts to

    monkeypatch.setattr(E, "finish_embeddings", stopped)
    at = app_test().run()
    at.switch_page("pages/data.py").run()
    at.button(key="data_finish").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("Stopped: the vectors computed so far are kept (0 of 126 turn texts of 'demo'"
               in i.value.replace("\\", "") for i in at.info), texts(at)
    at.run()
    assert "Stopped:" not in texts(at)  # said once


def test_a_failed_compute_is_one_error_line(app_db, monkeypatch):
    import bfr_core.retrieval.embed as E
    from bfr_core.retrieval.encoders import EmbedError

    def broken(store, dataset_id, progress=None):
        raise EmbedError("the MiniLM weights are missing")

    monkeypatch.setattr(E, "finish_embeddings", broken)
    at = app_test().run()
    at.switch_page("pages/data.py").run()
    at.button(key="data_finish").click().run()
    assert not at.exception and [e.value for e in at.error] == ["the MiniLM weights are missing"]
    assert not [b for b in at.button if b.key == "data_cancel"]


@pytest.mark.skipif(not (SHARED_DATA / "beam" / "100K" / "1").is_dir(), reason="needs ../shared/data/beam/100K/1")
def test_a_shared_beam_conversation_is_offered_and_guessed_beam(app_db):
    at = app_test().run()
    at.switch_page("pages/data.py").run()
    at.radio(key="data_source").set_value("Shared copy (../shared/data)").run()
    conv = SHARED_DATA / "beam" / "100K" / "1"
    assert "beam/100K/1 · one BEAM conversation" in at.selectbox(key="data_shared").options
    at.selectbox(key="data_shared").select(conv).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="data_kind_beam").value == "beam"
