"""bfr_core.ingest.ingest: encoded before written, taken back when interrupted (the app's Cancel),
finished by a rerun after a kill, with a bar whose count tracks time."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bfr_core.ingest import ingest
from bfr_core.ingest.demo import demo_file
from bfr_core.progress import Recorder
from bfr_core.store import Store


class Cancel(BaseException):
    """What Streamlit raises inside a progress callback when the user clicks Cancel."""


def _counts(store):
    names = [r[0] for r in store.cursor().execute("SELECT table_name FROM information_schema.tables").fetchall()]
    return {n: store.cursor().execute(f'SELECT count(*) FROM "{n}"').fetchone()[0] for n in sorted(names)}


@pytest.mark.parametrize("stage", ["encoding all turns", "writing the dataset"])
def test_cancel_leaves_the_store_as_it_was(tmp_path, stage):
    store = Store(tmp_path / "s.duckdb")
    before = _counts(store)

    def cb(done, total, label):
        if label.startswith(stage) and (done > 0 or stage.startswith("writing")):
            raise Cancel

    with pytest.raises(Cancel):
        ingest(store, "jsonl", demo_file(), name="demo", progress=cb)
    after = _counts(store)
    assert {k: v for k, v in after.items() if v} == {k: v for k, v in before.items() if v}
    assert store.dataset("demo") is None


@pytest.fixture(scope="module")
def demo_updates(tmp_path_factory) -> list[tuple]:
    """The progress updates of one ingest of the demo into a new store (the tests below only read them)."""
    store = Store(tmp_path_factory.mktemp("progress") / "s.duckdb")
    rec = Recorder()
    ingest(store, "jsonl", demo_file(), name="demo", progress=rec)
    store.close()
    return list(rec.updates)


def test_progress_names_stages_in_words(demo_updates):
    labels = list(dict.fromkeys(u[3].split(" · ")[0] for u in demo_updates))  # the label counts texts after " · "
    order = ["checking which texts are already encoded", "encoding all turns (static word vectors)",
             "writing the dataset to the store"]
    assert [label for label in labels if label in order] == order
    assert not any("@" in label for label in labels)  # no internal model ids
    enc = [u for u in demo_updates if u[3].startswith("encoding")]
    assert enc[-1][1] == enc[-1][2]  # the one encoding bar ends full


def test_encoding_bar_counts_cost_and_labels_texts(demo_updates):
    enc = [u for u in demo_updates if u[3].startswith(("encoding", "loading the MiniLM"))]
    assert len({u[2] for u in enc}) == 1  # one bar over every model: its total never changes
    assert [u[1] for u in enc] == sorted(u[1] for u in enc)  # and its count never goes back
    last = enc[-1][3]
    assert last.endswith(" texts") and " · " in last
    done, total = last.split(" · ")[1].removesuffix(" texts").split(" of ")
    assert done == total and enc[-1][1] == enc[-1][2]


def test_rerun_of_the_same_file_finishes_instead_of_refusing(tmp_path, monkeypatch):
    from bfr_core.retrieval import embed

    store = Store(tmp_path / "s.duckdb")
    ingest(store, "jsonl", demo_file(), name="demo")
    store.cursor().execute("DELETE FROM embeddings WHERE rowid IN (SELECT rowid FROM embeddings LIMIT 5)")
    report = ingest(store, "jsonl", demo_file(), name="demo")  # as after a kill in the cache stage
    assert report.turns == 126 and report.scoreable == 6
    assert any("already in the store from this same file" in n for n in report.notes)
    assert any("5 text(s) encoded" in n for n in report.notes)
    monkeypatch.setattr(embed, "finish_embeddings", lambda *a, **k: 0)
    assert any("0 text(s) encoded" in n for n in ingest(store, "jsonl", demo_file(), name="demo").notes)


KILLED = """
import os, signal, sys
from bfr_core.ingest import ingest
from bfr_core.ingest.demo import demo_file
from bfr_core.store import Store

def cb(done, total, label):
    if label.startswith(sys.argv[2]) and (done > 0 or not label.startswith("encoding")):
        os.kill(os.getpid(), signal.SIGKILL)

ingest(Store(sys.argv[1]), "jsonl", demo_file(), name="demo", progress=cb, entities=True)
"""


def _contents(path: Path) -> dict[str, list]:
    """Every table's rows (sorted; the ingest time left out), read from a closed store file: the
    comparison ``bench/checks/bench_store_same.py`` makes between an old and a new code's stores."""
    from bench.lib.store_rows import contents

    return contents(path)


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> tuple[dict[str, list], dict[tuple[str, str], np.ndarray]]:
    """An uninterrupted ingest of the demo (names found too): its rows and its vectors, read once from the
    closed store for every stage's comparison below."""
    whole = tmp_path_factory.mktemp("whole") / "whole.duckdb"
    s = Store(whole)
    ingest(s, "jsonl", demo_file(), name="demo", entities=True)
    s.close()
    return _contents(whole), _vectors(whole)


@pytest.mark.slow
@pytest.mark.parametrize("stage", ["encoding all turns", "encoding short turns", "writing the dataset",
                                   "finding names"])
def test_kill_then_rerun_ends_with_the_uninterrupted_store(tmp_path, stage, uninterrupted):
    """SIGKILL in each stage, then the same ingest again: the store equals an uninterrupted ingest's,
    vectors bit for bit (MiniLM batches only texts of one token count, so what a kill left cached
    does not change the others' vectors)."""
    killed = tmp_path / "killed.duckdb"
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    done = subprocess.run([sys.executable, "-c", KILLED, str(killed), stage], env=env, capture_output=True, text=True)
    assert done.returncode == -9, done.stderr[-500:]
    s = Store(killed)
    ingest(s, "jsonl", demo_file(), name="demo", entities=True)
    s.close()
    want, ref = uninterrupted
    got = _contents(killed)
    assert got.keys() == want.keys()
    assert {k: v for k, v in got.items() if k != "embeddings"} == {k: v for k, v in want.items() if k != "embeddings"}
    vecs = _vectors(killed)
    assert vecs.keys() == ref.keys()
    # bit for bit where MiniLM runs in bf16 (batches of one token count pad nothing); fp32 GEMMs of
    # other batch sizes may differ in the last bits
    assert all(np.allclose(vecs[k], ref[k], rtol=0, atol=1e-6) for k in ref)


def _vectors(path: Path) -> dict[tuple[str, str], np.ndarray]:
    store = Store(path, read_only=True)
    rows = store.cursor().execute("SELECT model_id, text_hash, vec FROM embeddings").fetchall()
    store.close()
    return {(m, h): np.asarray(v, np.float32) for m, h, v in rows}


def test_ray_ingest_on_a_local_2_worker_cluster_writes_the_local_store(tmp_path):
    """``bfr ingest --executor ray``: MiniLM's chunks encoded by Ray workers, written by the one store
    writer; the store equals the local ingest's (vectors within the last fp32 bits)."""
    pytest.importorskip("ray", reason="ray is not installed (pip install -e '.[ray]')")
    import ray

    from bfr_core.cli import main

    local, dist = tmp_path / "local.duckdb", tmp_path / "ray.duckdb"
    args = ["ingest", "jsonl", str(demo_file()), "--name", "demo", "--quiet"]
    assert main([*args, "--db", str(local)]) == 0
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        assert main([*args, "--db", str(dist), "--executor", "ray"]) == 0
    finally:
        ray.shutdown()
    got, want = _contents(dist), _contents(local)
    assert {k: v for k, v in got.items() if k != "embeddings"} == {k: v for k, v in want.items() if k != "embeddings"}
    vecs, ref = _vectors(dist), _vectors(local)
    assert vecs.keys() == ref.keys() and any(k[0].startswith("minilm") for k in ref)
    assert all(np.allclose(vecs[k], ref[k], rtol=0, atol=1e-6) for k in ref)


def test_the_stored_source_is_the_files_absolute_path(tmp_path, monkeypatch):
    """A path typed relative to another folder named nothing once the app ran from the repository folder."""
    import json

    from bfr_core.ingest import ingest
    from bfr_core.store import Store

    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "d.jsonl").write_text("\n".join(json.dumps(r) for r in (
        {"type": "session", "session_id": "s", "turns": [{"turn_id": "t1", "speaker": "a", "text": "hi"}]},
        {"type": "question", "question_id": "q", "question": "hi?", "answer": "x", "scope": "default",
         "gold": ["t1"]})) + "\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    store = Store(tmp_path / "s.duckdb")
    ingest(store, "jsonl", "sub/d.jsonl", name="d", embed=False)
    assert store.dataset("d")["source"] == str((tmp_path / "sub" / "d.jsonl").resolve())
    store.close()
