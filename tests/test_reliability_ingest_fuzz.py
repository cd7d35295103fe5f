"""Bad files: hypothesis fuzzing of every ingest format, starting from small real records.

Seeds: one LoCoMo conversation cut to 2 sessions and its questions on them; one LongMemEval entry
cut to 3 sessions (its answer session kept); the first demo JSONL lines. Each example mutates a
seed (dropped keys, wrong types, huge strings, non-UTF-8 bytes, truncated gzip, deep nesting) and
ingests it into a store that already holds a dataset. The verdict is one of two: a clear
:class:`BfrError` naming the file (and the record / field for a record-level fault) with the store
unchanged, or a correct ingest. Any other exception fails the test. Also covered: a gzip bomb is
refused at the loader's size limit, and an over-size upload is refused by the Data page before it
is read.

Not covered: files larger than memory (the limit is tested by lowering it), concurrent ingests.
"""

from __future__ import annotations

import copy
import gzip
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bfr_core.errors import BfrError, InputError
from bfr_core.ingest import common, ingest
from bfr_core.ingest.demo import demo_file
from bfr_core.ingest.sources import data_dir
from bfr_core.store import Store

ROOT = Path(__file__).resolve().parents[1]
SHARED = data_dir()
LOCOMO = SHARED / "locomo10.json"
LME = SHARED / "longmemeval_s_dev50.json.gz"
DEMO = demo_file()
TABLES = ("datasets", "sessions", "turns", "scopes", "scope_sessions", "questions", "gold")
STATS: dict[str, int] = {}  # inputs tried per format (read by bench/checks/bench_reliability.py)
FUZZ = settings(max_examples=100, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

pytestmark = pytest.mark.skipif(not (LOCOMO.is_file() and LME.is_file()), reason="shared data missing")


# -- seeds --------------------------------------------------------------------------------------
def locomo_seed() -> list[dict[str, Any]]:
    conv = json.loads(LOCOMO.read_text(encoding="utf-8"))[0]
    c = conv["conversation"]
    keep = {k: c[k] for k in ("speaker_a", "speaker_b", "session_1_date_time", "session_1",
                              "session_2_date_time", "session_2")}
    keep["session_1"], keep["session_2"] = keep["session_1"][:6], keep["session_2"][:6]
    ids = {t["dia_id"] for t in keep["session_1"] + keep["session_2"]}
    qa = [q for q in conv["qa"] if q.get("evidence") and set(q["evidence"]) <= ids][:4]
    return [{"sample_id": conv["sample_id"], "conversation": keep, "qa": qa}]


def lme_seed() -> list[dict[str, Any]]:
    entry = json.loads(gzip.decompress(LME.read_bytes()))[0]
    ids = entry["haystack_session_ids"]
    pick = [i for i, s in enumerate(ids) if s in entry["answer_session_ids"]][:1]
    pick = sorted(set(pick + [0, 1, 2]))[:3]
    out = dict(entry)
    for key in ("haystack_sessions", "haystack_dates", "haystack_session_ids"):
        out[key] = [entry[key][i] for i in pick]
    out["haystack_sessions"] = [s[:4] + [t for t in s[4:] if t.get("has_answer")] for s in out["haystack_sessions"]]
    return [out]


def jsonl_seed() -> list[dict[str, Any]]:
    lines = [json.loads(x) for x in DEMO.read_text(encoding="utf-8").splitlines() if x.strip()]
    sessions = [x for x in lines if x["type"] == "session"][:3]
    known = {t.get("turn_id") for s in sessions for t in s["turns"]}
    qs = [x for x in lines if x["type"] == "question" and set(x["gold"]) <= known][:2]
    if not qs:  # keep one question, gold cut to what the seed holds
        q = dict(next(x for x in lines if x["type"] == "question"))
        q["gold"] = [sessions[0]["turns"][0]["turn_id"]]
        qs = [q]
    for s in sessions:
        s["turns"] = s["turns"][:5]
    known = {t.get("turn_id") for s in sessions for t in s["turns"]}
    for q in qs:
        q["gold"] = [g for g in q["gold"] if g in known] or [sessions[0]["turns"][0]["turn_id"]]
    return sessions + qs


SEEDS = {"locomo": locomo_seed, "longmemeval": lme_seed, "jsonl": jsonl_seed}


def encode(kind: str, data: list[dict[str, Any]]) -> bytes:
    if kind == "jsonl":
        return "".join(json.dumps(x) + "\n" for x in data).encode("utf-8")
    return json.dumps(data).encode("utf-8")


# -- mutations ----------------------------------------------------------------------------------
def paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    """Every key / index path in a JSON tree (containers included)."""
    out = []
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for k, v in items:
        out.append((*prefix, k))
        out.extend(paths(v, (*prefix, k)))
    return out


def _parent(tree: Any, path: tuple) -> Any:
    for k in path[:-1]:
        tree = tree[k]
    return tree


def deep(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


WRONG = st.one_of(st.none(), st.booleans(), st.integers(-10, 10**12), st.floats(allow_nan=True),
                  st.text(max_size=20), st.lists(st.integers(), max_size=3),
                  st.dictionaries(st.text(max_size=5), st.integers(), max_size=2))


@st.composite
def mutated(draw: st.DrawFn, kind: str) -> tuple[str, bytes, bool]:
    """(mutation name, file bytes, whether the fault sits in one record's field)."""
    data = copy.deepcopy(SEED_DATA[kind])
    op = draw(st.sampled_from(["drop", "wrong_type", "huge", "nested", "non_utf8", "truncate", "gzip_cut",
                               "gzip_ok", "dup_record", "keep"]))
    where = draw(st.sampled_from(paths(data)))
    parent, key = _parent(data, where), where[-1]
    field_fault = False
    if op == "drop":
        if isinstance(parent, dict):
            del parent[key]
        else:
            parent.pop(key)
        field_fault = isinstance(parent, dict)
    elif op == "wrong_type":
        parent[key] = draw(WRONG)
        field_fault = True
    elif op == "huge":
        parent[key] = "é" * draw(st.sampled_from([1 << 16, 1 << 20]))
    elif op == "nested":
        parent[key] = deep(draw(st.sampled_from([50, 500])))
    elif op == "dup_record":
        data.append(copy.deepcopy(data[0]))
    raw = encode(kind, data)
    if op == "nested" and draw(st.booleans()):  # nesting past any recursion limit, as raw text
        cut = raw.rfind(b"]")
        raw = raw[:cut] + b"," + b"[" * 200_000 + b"]" * 200_000 + raw[cut:]
    elif op == "non_utf8":
        at = draw(st.integers(0, len(raw)))
        raw = raw[:at] + draw(st.sampled_from([b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\x80\x80"])) + raw[at:]
    elif op == "truncate":
        raw = raw[: draw(st.integers(0, len(raw) - 1))]
    elif op == "gzip_cut":
        z = gzip.compress(raw, mtime=0)
        raw = z[: draw(st.integers(1, len(z) - 1))]
    elif op == "gzip_ok":
        raw = gzip.compress(raw, mtime=0)
    return op, raw, field_fault


SEED_DATA: dict[str, list[dict[str, Any]]] = {}


def snapshot(store: Store) -> tuple:
    cur = store.cursor()
    counts = tuple(cur.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES)
    return counts, [(d["dataset_id"], d["source_sha256"]) for d in store.datasets()]


@pytest.fixture(scope="module")
def base_store():
    """An in-memory store that already holds one dataset, so 'unchanged' means something."""
    for kind, make in SEEDS.items():
        SEED_DATA[kind] = make()
    store = Store()
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "seed.jsonl"
        p.write_bytes(encode("jsonl", SEED_DATA["jsonl"]))
        ingest(store, "jsonl", p, name="existing", embed=False)
    yield store
    store.close()


def check_one(store: Store, kind: str, op: str, raw: bytes, field_fault: bool) -> str:
    """Ingest ``raw`` as ``kind``; return "ok" or "refused", failing on anything else."""
    STATS[kind] = STATS.get(kind, 0) + 1
    before = snapshot(store)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"fuzz-{kind}.{'jsonl' if kind == 'jsonl' else 'json'}"
        path.write_bytes(raw)
        try:
            report = ingest(store, kind, path, name="fuzz", embed=False)
        except BfrError as exc:
            msg = str(exc)
            assert str(path) in msg, f"{op}: error does not name the file: {msg}"
            assert "Traceback" not in msg and len(msg) < 2000, msg[:300]
            if isinstance(exc, InputError) and field_fault and op == "drop":
                # a missing field is named by record and field (or, for a container, by record)
                assert exc.record is not None or exc.field is not None or "no " in msg or "empty" in msg, msg
            assert snapshot(store) == before, f"{op}: store changed after a refused ingest"
            STATS[f"{kind}_refused"] = STATS.get(f"{kind}_refused", 0) + 1
            return "refused"
    after = snapshot(store)
    counts = dict(zip(TABLES, after[0], strict=True))
    old = dict(zip(TABLES, before[0], strict=True))
    assert counts["datasets"] == old["datasets"] + 1
    assert counts["turns"] - old["turns"] == report.turns
    assert counts["questions"] - old["questions"] == report.questions
    assert {q.question_id for q in store.questions("fuzz")} and store.counts("fuzz")["turns"] == report.turns
    store.delete_dataset("fuzz")
    assert snapshot(store) == before
    STATS[f"{kind}_ingested"] = STATS.get(f"{kind}_ingested", 0) + 1
    return "ok"


def test_seeds_ingest_cleanly(base_store):
    for kind in SEEDS:
        assert check_one(base_store, kind, "keep", encode(kind, SEED_DATA[kind]), False) == "ok"


@FUZZ
@given(case=st.data())
def test_fuzz_locomo(base_store, case):
    check_one(base_store, "locomo", *case.draw(mutated("locomo")))


@FUZZ
@given(case=st.data())
def test_fuzz_longmemeval(base_store, case):
    check_one(base_store, "longmemeval", *case.draw(mutated("longmemeval")))


@FUZZ
@given(case=st.data())
def test_fuzz_jsonl(base_store, case):
    check_one(base_store, "jsonl", *case.draw(mutated("jsonl")))


@pytest.mark.parametrize("kind", list(SEEDS))
def test_gzip_bomb_refused_at_limit(base_store, kind, monkeypatch, tmp_path):
    """A small gzip that inflates past the limit is refused without inflating it all."""
    monkeypatch.setattr(common, "MAX_INPUT_BYTES", 8 << 20)
    bomb = tmp_path / "bomb.json.gz"
    with gzip.open(bomb, "wb", compresslevel=9) as gz:
        gz.write(b"[" + b" " * (64 << 20) + b"]")
    assert bomb.stat().st_size < 200_000
    before = snapshot(base_store)
    with pytest.raises(InputError, match="input limit") as err:
        ingest(base_store, kind, bomb, name="bomb", embed=False)
    assert str(bomb) in str(err.value)
    assert snapshot(base_store) == before
    STATS[f"{kind}_bomb"] = 1


def test_plain_file_over_limit_refused(base_store, monkeypatch, tmp_path):
    monkeypatch.setattr(common, "MAX_INPUT_BYTES", 1000)
    big = tmp_path / "big.jsonl"
    big.write_bytes(encode("jsonl", SEED_DATA["jsonl"]))
    with pytest.raises(InputError, match="input limit"):
        ingest(base_store, "jsonl", big, name="big", embed=False)


class _HugeUpload:
    """Stands in for Streamlit's UploadedFile: reports 301 MB and fails if anyone reads it."""

    name = "locomo10.json"
    size = 301 * 1024 * 1024
    reads = 0

    def _refuse(self, *args: Any) -> bytes:
        type(self).reads += 1
        raise AssertionError("the upload was read")

    read = readinto = getvalue = getbuffer = _refuse


def test_upload_over_limit_refused_before_read(tmp_path, monkeypatch):
    """pages/data.py checks ``upload.size`` against MAX_UPLOAD_MB and refuses without reading it."""
    import streamlit
    from streamlit.runtime import pages_manager as pm
    from streamlit.testing.v1 import AppTest

    from bfr_core.ingest.demo import ensure_demo_store

    original = pm.PagesManager.__init__

    def init(self, *args, **kwargs):  # run app.py as the st.navigation frame (see tests/app/conftest.py)
        original(self, *args, **kwargs)
        pm.PagesManager.uses_pages_directory = False

    monkeypatch.setattr(pm.PagesManager, "__init__", init)
    db = tmp_path / "store.duckdb"
    ensure_demo_store(db, embed=False).close()
    monkeypatch.setenv("BFR_STORE", str(db))
    monkeypatch.setattr(streamlit, "file_uploader", lambda *a, **k: _HugeUpload())
    try:
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30).run()
        at.switch_page("pages/data.py").run()
        at.radio(key="data_source").set_value("Upload a file").run()
        at.checkbox(key="data_embed").uncheck().run()
        at.button(key="data_ingest").click().run()
        assert not at.exception
        errors = [e.value.replace("\\", "") for e in at.error]  # shown Markdown-escaped
        assert any("over the 300 MB upload limit" in e and "locomo10.json" in e for e in errors), errors
        assert _HugeUpload.reads == 0
        after = Store(db)  # the app holds this file open in-process (same configuration)
        assert [d["dataset_id"] for d in after.datasets()] == ["demo"]
        after.close()
    finally:
        streamlit.cache_resource.clear()
        streamlit.cache_data.clear()


def write_stats() -> None:
    out = os.environ.get("BFR_RELIABILITY_STATS")
    if out:
        Path(out).write_text(json.dumps({"ingest_fuzz": STATS}), encoding="utf-8")


@pytest.fixture(scope="module", autouse=True)
def _stats():
    yield
    write_stats()
