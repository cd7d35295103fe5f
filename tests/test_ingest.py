"""bfr_core.ingest.ingest: encoded before written, and taken back when interrupted (the app's Cancel)."""

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


def test_progress_names_stages_in_words(tmp_path):
    store = Store(tmp_path / "s.duckdb")
    rec = Recorder()
    ingest(store, "jsonl", demo_file(), name="demo", progress=rec)
    labels = list(dict.fromkeys(u[3] for u in rec.updates))
    order = ["checking which texts are already encoded", "encoding all turns (static word vectors)",
             "writing the dataset to the store"]
    assert [label for label in labels if label in order] == order
    assert not any("@" in label for label in labels)  # no internal model ids
    enc = [u for u in rec.updates if u[3].startswith("encoding")]
    assert enc[-1][1] == enc[-1][2]  # the one encoding bar ends full
