"""bfr_core.retrieval.embed: the Protocol, the static model's pooling, the DuckDB cache (encode once per text).

The real MiniLM is loaded once per session (module fixture) and only encodes a few dozen texts.
The static model is exercised with a small table distilled from the first vocabulary ids, so the
tests never pay the one-off full distillation.
"""

from __future__ import annotations

import json
from datetime import datetime

import numpy as np
import pytest

from bfr_core.records import Bundle, IngestReport, Question, Scope, Session, Turn
from bfr_core.retrieval import embed, encoders
from bfr_core.retrieval.embed import cached_count, ensure_embeddings, vectors_for, vectors_for_texts
from bfr_core.retrieval.encoders import (
    DenseSpec,
    EmbedError,
    ShortOnlyEmbedder,
    StaticEmbedder,
    TransformerEmbedder,
    default_spec,
    get_model,
    token_counts,
)
from bfr_core.retrieval.views.common import index_text
from bfr_core.store import Store, text_hash

TEXTS = [
    "I ordered a new remote shutter release online today.",
    "The remote shutter release arrived this morning!",
    "My sister adopted a golden retriever puppy.",
    "We talked about Python type hints and dataclasses.",
    "",
]


class CountingEmbedder:
    """A deterministic stand-in that records how many texts it was asked to encode."""

    model_id = "counting@8"
    dim = 8

    def __init__(self) -> None:
        self.encoded = 0

    def encode(self, texts, progress=None):
        self.encoded += len(texts)
        out = np.zeros((len(texts), self.dim), np.float32)
        for i, t in enumerate(texts):
            out[i, len(t) % self.dim] = 1.0
        return out


def bundle(dataset: str = "toy") -> Bundle:
    sessions = (Session("s1", datetime(2023, 2, 5)), Session("s2", datetime(2023, 2, 10)))
    turns = (
        Turn("s1_1", "s1", 0, "user", TEXTS[0]),
        Turn("s1_2", "s1", 1, "assistant", TEXTS[2]),
        Turn("s2_1", "s2", 0, "user", TEXTS[1]),
        Turn("s2_2", "s2", 1, "Caroline", TEXTS[3]),
        Turn("s2_3", "s2", 2, "user", TEXTS[0]),  # a duplicate text: encoded once
    )
    scopes = (Scope(dataset, "h1", ("s1", "s2"), ("user", "assistant", "Caroline")),)
    questions = (Question(dataset, "q1", "h1", "When did it arrive?", "Feb 10", "temporal", ("s2_1",)),)
    return Bundle(dataset, "jsonl", "mem", "sha", sessions, turns, scopes, questions,
                  IngestReport(dataset, "jsonl", "mem", 1, 2, 5, 1, 1))


@pytest.fixture(scope="module")
def minilm() -> TransformerEmbedder:
    return TransformerEmbedder(256)


@pytest.fixture(scope="module")
def small_table() -> np.ndarray:
    # The first 1,200 ids: [PAD], [unused*], [UNK].. and the single characters (ids ~999-1100).
    return encoders.distill_static(dims=16, limit=1200)


@pytest.fixture(scope="module")
def small_static(small_table) -> StaticEmbedder:
    return StaticEmbedder.from_table(small_table)


def test_offline_env_is_set_before_any_hub_import():
    import os

    assert os.environ["HF_HUB_OFFLINE"] == "1"


def test_minilm_vectors_are_normalised_float32_and_order_independent(minilm):
    vecs = minilm.encode(TEXTS)
    assert vecs.dtype == np.float32 and vecs.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(vecs[:4], axis=1), 1.0, atol=1e-5)
    again = minilm.encode(TEXTS[::-1])[::-1]  # length-sorting inside encode must not reorder rows
    assert np.allclose(vecs, again, atol=1e-5)
    sims = vecs[:4] @ vecs[:4].T
    assert sims[0, 1] > sims[0, 2] and sims[0, 1] > sims[0, 3]  # the paraphrase is nearest
    assert minilm.model_id == "minilm-l6-v2@256"


def test_minilm_respects_token_cap():
    long = " ".join(["photography"] * 50) + " zebra " * 200
    short = TransformerEmbedder(16)
    assert short.model_id == "minilm-l6-v2@16"
    a, b = short.encode([long, " ".join(["photography"] * 50)])
    assert float(a @ b) > 0.999  # the tail beyond 16 tokens is never seen


def test_static_is_mean_of_token_rows_then_l2(small_static):
    table, tok = small_static.load()
    ids = tok.encode("a b c ! a", add_special_tokens=False).ids
    assert len(ids) == 5 and max(ids) < 1200
    want = table[ids].mean(axis=0)
    want /= np.linalg.norm(want)
    got = small_static.encode(["a b c ! a"])[0]
    assert np.allclose(got, want, atol=1e-6)
    assert small_static.model_id == "m2v-minilm-l6-v2@16d"
    assert not small_static.encode([""]).any()  # empty text -> zero vector, no NaN


def test_distillation_is_deterministic_and_zeroes_unused_rows(small_table):
    a = small_table
    assert np.array_equal(a, encoders.distill_static(dims=16, limit=1200))
    assert not a[1].any()  # id 1 is [unused0]
    assert not a[1500:].any()  # beyond the limit
    assert a[0].any() and a[1100].any()


def test_static_table_is_cached_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("BFR_CACHE_DIR", str(tmp_path))
    calls = []
    monkeypatch.setattr(encoders, "distill_static", lambda dims: calls.append(dims) or np.ones((4, dims), np.float32))
    assert encoders._static_table(8).shape == (4, 8)
    assert encoders._static_table(8).shape == (4, 8)
    assert calls == [8]
    assert (tmp_path / "m2v-minilm-l6-v2-8d.npy").is_file()


def test_bf16_autocast_stays_within_cosine_of_fp32(minilm):
    bf16 = TransformerEmbedder(256, bf16=True)
    assert bf16.model_id == "minilm-l6-v2-bf16@256"  # its own cache key: vectors never mix with fp32
    a, b = minilm.encode(TEXTS), bf16.encode(TEXTS)
    assert b.dtype == np.float32 and np.allclose(np.linalg.norm(b, axis=1), 1.0, atol=1e-3)
    assert float(np.min(np.sum(a * b, axis=1))) > 0.995


def test_bf16_detection_follows_the_override(monkeypatch):
    encoders.cpu_has_bf16.cache_clear()
    monkeypatch.setenv("BFR_BF16", "0")
    assert not encoders.cpu_has_bf16() and encoders.default_short_id() == "minilm-l6-v2@160-short"
    encoders.cpu_has_bf16.cache_clear()
    monkeypatch.setenv("BFR_BF16", "1")
    assert encoders.default_short_id() == "minilm-l6-v2-bf16@160-short"
    assert get_model(encoders.default_short_id()).inner.bf16
    encoders.cpu_has_bf16.cache_clear()


def test_get_model_ids():
    assert get_model("minilm-l6-v2-int8@128").model_id == "minilm-l6-v2-int8@128"
    assert get_model("minilm-l6-v2-bf16@128").model_id == "minilm-l6-v2-bf16@128"
    assert get_model("m2v-minilm-l6-v2@256d").model_id == "m2v-minilm-l6-v2@256d"
    assert get_model("m2v-minilm-l6-v2@256d-512t").model_id == "m2v-minilm-l6-v2@256d-512t"
    assert get_model() is get_model(encoders.DEFAULT_MODEL_ID)
    for bad in ("bert-base", "minilm-l6-v2", "minilm-l6-v2@x", "m2v-minilm-l6-v2@abc"):
        with pytest.raises(EmbedError):
            get_model(bad)


def test_ensure_embeddings_encodes_each_unique_text_once_and_caches():
    store = Store()
    store.write_bundle(bundle())
    model = CountingEmbedder()
    assert ensure_embeddings(store, "toy", model=model) == 4  # 5 turns, one duplicate text
    assert model.encoded == 4
    assert ensure_embeddings(store, "toy", model=model) == 0  # warm: nothing to do
    assert model.encoded == 4
    assert cached_count(store, model.model_id) == 4
    turns = store.scope_turns("toy", "h1")
    hashes = [text_hash(index_text(t)) for t in turns]
    vecs = vectors_for(store, model.model_id, hashes)
    assert vecs.shape == (5, 8) and np.array_equal(vecs[0], vecs[4])
    assert np.array_equal(vecs, model.encode([index_text(t) for t in turns]))


def test_cache_keys_by_model_id_and_indexed_text():
    store = Store()
    store.write_bundle(bundle())
    ensure_embeddings(store, "toy", model=CountingEmbedder())
    named = next(t for t in store.scope_turns("toy", "h1") if t.speaker == "Caroline")
    # A named speaker is indexed as "Speaker: text" (the turn's own text hash is not the key) ...
    assert vectors_for(store, "counting@8", [text_hash(f"Caroline: {TEXTS[3]}")]).shape == (1, 8)
    with pytest.raises(EmbedError, match="no 'counting@8' embedding"):
        vectors_for(store, "counting@8", [text_hash(named.text)])
    # ... and another model id never sees these rows.
    with pytest.raises(EmbedError):
        vectors_for(store, "other@8", [text_hash(TEXTS[0])])


def test_ensure_reports_progress_and_default_signature():
    store = Store()
    store.write_bundle(bundle())
    seen = []
    n = ensure_embeddings(store, "toy", progress=lambda d, t, label: seen.append((d, t)), model=CountingEmbedder())
    assert n == 4 and seen[-1] == (4, 4)


def test_vectors_for_texts_fills_the_cache_lazily():
    store = Store()
    model = CountingEmbedder()
    first = vectors_for_texts(store, model, ["a", "bb", "a"])
    assert model.encoded == 2 and first.shape == (3, 8)
    again = vectors_for_texts(store, model, ["bb", "a", "ccc"])
    assert model.encoded == 3  # only "ccc" was new
    assert np.array_equal(again[0], first[1]) and np.array_equal(again[1], first[0])
    assert vectors_for_texts(None, model, []).shape == (0, 8)


def test_read_only_store_is_never_written(tmp_path):
    path = tmp_path / "ro.duckdb"
    rw = Store(path)
    rw.write_bundle(bundle())
    rw.close()
    ro = Store(path, read_only=True)
    model = CountingEmbedder()
    assert ensure_embeddings(ro, "toy", model=model) == 0
    assert vectors_for_texts(ro, model, ["x"]).shape == (1, 8)  # encoded in memory only
    assert cached_count(ro, model.model_id) == 0


def test_short_only_encodes_short_texts_and_zeroes_long_ones():
    inner = CountingEmbedder()
    model = ShortOnlyEmbedder(inner, max_tokens=8)
    assert model.model_id == "counting@8-short" and model.dim == 8
    texts = ["a short one", "this sentence is certainly longer than eight word pieces in total"]
    assert token_counts(texts).tolist()[0] == 5  # [CLS] a short one [SEP]
    vecs = model.encode(texts)
    assert inner.encoded == 1 and vecs[0].any() and not vecs[1].any()


def test_default_spec_and_env_override(monkeypatch):
    monkeypatch.delenv("BFR_DENSE_MODEL", raising=False)
    monkeypatch.delenv("BFR_DENSE_SHORT", raising=False)
    spec = default_spec()
    assert spec == DenseSpec() and spec.short == encoders.default_short_id()
    assert spec.short in ("minilm-l6-v2@160-short", "minilm-l6-v2-bf16@160-short")
    assert get_model(spec.short).model_id == spec.short and get_model(spec.short).max_tokens == 160
    monkeypatch.setenv("BFR_DENSE_SHORT", "minilm-l6-v2@128-short")  # replaying a run made at the old cap
    assert default_spec().short == "minilm-l6-v2@128-short"
    monkeypatch.delenv("BFR_DENSE_SHORT")
    monkeypatch.setenv("BFR_DENSE_MODEL", "minilm-l6-v2@256")
    assert default_spec() == DenseSpec(base="minilm-l6-v2@256", short=None)
    assert encoders.default_model_id() == "minilm-l6-v2@256"
    with pytest.raises(EmbedError):
        get_model("m2v-minilm-l6-v2@256d-short")


def test_ensure_without_model_fills_every_model_of_the_spec(monkeypatch):
    monkeypatch.delenv("BFR_DENSE_MODEL", raising=False)
    base, inner = CountingEmbedder(), CountingEmbedder()
    inner.model_id = "inner@8"
    short = ShortOnlyEmbedder(inner, max_tokens=12)
    models = {encoders.STATIC: base, encoders.DenseSpec().short: short}
    monkeypatch.setattr(encoders, "_model", lambda model_id: models[model_id])
    store = Store()
    store.write_bundle(bundle())
    # 4 unique turn texts x 2 models, and the one question's query vector from each query encoder
    assert ensure_embeddings(store, "toy") == 10
    assert base.encoded == 5 and 1 < inner.encoded < 5  # the long turn texts were not sent to MiniLM
    assert ensure_embeddings(store, "toy") == 0  # zero rows count as cached: warm means no work
    assert cached_count(store, short.model_id) == 4
    # the question is cached under the query encoder's id: MiniLM itself, not its short-text wrapper
    assert embed.query_encoder(short) is inner and cached_count(store, inner.model_id) == 1


def test_finish_encodes_what_a_written_dataset_lacks_as_ensure_does(monkeypatch):
    """Issue 26: a dataset written without vectors is finished through the ingest's own encoding
    (plan_encoding, run_encoding): the same rows as ensure_embeddings, only what is missing encoded."""
    monkeypatch.delenv("BFR_DENSE_MODEL", raising=False)
    base, inner = CountingEmbedder(), CountingEmbedder()
    base.model_id, inner.model_id = encoders.STATIC, encoders.DenseSpec().short.removesuffix("-short")
    short = ShortOnlyEmbedder(inner, max_tokens=12)
    models = {m.model_id: m for m in (base, short, inner)}
    monkeypatch.setattr(encoders, "_model", lambda model_id: models[model_id])

    def rows(store):
        return sorted((m, h, tuple(v)) for m, h, v in store.cursor().execute(
            "SELECT model_id, text_hash, vec FROM embeddings").fetchall())

    ensured, finished = Store(), Store()
    for s in (ensured, finished):
        s.write_bundle(bundle())
    assert ensure_embeddings(ensured, "toy") == 10
    assert ensure_embeddings(finished, "toy", model=base) == 4  # as if stopped after the static model
    before = base.encoded, inner.encoded
    seen = []
    assert embed.finish_embeddings(finished, "toy", progress=lambda d, t, label: seen.append(label)) == 6
    assert base.encoded == before[0] + 1 and inner.encoded > before[1]  # the question, MiniLM's short texts
    assert rows(finished) == rows(ensured) and seen
    assert embed.finish_embeddings(finished, "toy") == 0


@pytest.mark.parametrize("bf16", [False, True])
def test_query_vectors_do_not_depend_on_what_they_are_encoded_with(bf16):
    """Batched queries get exactly the vector each gets alone (grouping by token count pads nothing),
    while a plain padded batch does not, so a query's vector never depends on the run's question mix."""
    model = TransformerEmbedder(128, bf16=bf16)
    texts = ["When did it arrive?", "How many days did the remote shutter release take to arrive after I ordered it?",
             "Who adopted a puppy?", "What did Caroline research?", "Where?"]
    alone = np.stack([model.encode([t])[0] for t in texts])
    padded = model.encode(texts)
    grouped, reverse = embed.encode_queries(model, texts), embed.encode_queries(model, texts[::-1])[::-1]
    if bf16:  # bf16 rounding makes padding visible (~1e-3); batches without padding are exact
        assert np.abs(padded - alone).max() > 1e-4
        assert np.array_equal(grouped, alone) and np.array_equal(reverse, alone)
    else:  # fp32 GEMMs of other shapes differ only in the last bits
        assert np.abs(grouped - alone).max() < 1e-6 and np.abs(reverse - alone).max() < 1e-6


def test_turn_vectors_do_not_depend_on_the_batch_and_stay_close_to_the_padded_path():
    """Ingest's turn vectors (``encode_alone``): each the vector the text gets alone, whatever else is
    in the batch (so a rerun after a kill, or a store that cached some texts already, ends with the
    same vectors), a zero row for a long text under a short-text model; within cosine 0.999 of the
    padded batches ingest used before (bf16 rounding of padded positions is the only difference)."""
    inner = TransformerEmbedder(16, bf16=True)
    short = ShortOnlyEmbedder(inner, 16)
    texts = TEXTS[:4] + ["a long turn " * 20, "Yes.", "What did Caroline research at the library on Friday?"]
    got = embed.encode_alone(short, texts)
    again = embed.encode_alone(short, texts[::-1])[::-1]
    alone = np.stack([embed.encode_alone(short, [t])[0] for t in texts])
    assert np.array_equal(got, again) and np.array_equal(got, alone)
    assert not got[4].any()  # the long turn: a zero row
    padded = short.encode(texts)
    keep = [i for i in range(len(texts)) if i != 4]
    assert (np.einsum("ij,ij->i", got[keep], padded[keep]) > 0.999).all()


def test_a_scopes_first_use_caches_the_vectors_an_ingest_writes():
    """vectors_for_texts (a scope's first build on a store written without vectors) encodes what is
    missing as ingest does: bit for bit encode_alone's vectors, whatever else it encodes with them."""
    inner = TransformerEmbedder(16, bf16=True)
    short = ShortOnlyEmbedder(inner, 16)
    texts = TEXTS[:4] + ["a long turn " * 20, "Yes.", "What did Caroline research at the library on Friday?"]
    store = Store(":memory:")
    seen: list[tuple[int, int]] = []
    got = vectors_for_texts(store, short, texts, progress=lambda d, t, _label: seen.append((d, t)))
    assert np.array_equal(got, embed.encode_alone(short, texts)) and seen[-1] == (len(texts), len(texts))
    assert np.array_equal(vectors_for_texts(Store(":memory:"), short, texts[2:]), got[2:])


def test_capped_token_counts_are_exact_within_the_cap_and_above_it_otherwise():
    """token_counts(texts, cap) tokenises long texts only up to a whitespace: same verdict as the
    full count for every text, exact counts for those within the cap (a word of no whitespace is
    counted whole, as a cut word may give more pieces than the whole one)."""
    rng = np.random.default_rng(7)
    words = ["the", "hiking", "trail", "Portland's", "unbelievably", "3.5km", "naïve", "!", "recommendation"]
    texts = [" ".join(rng.choice(words, n)) for n in (1, 5, 20, 40, 60, 200, 900)]
    texts += ["x" * 5000, "supercalifragilistic" * 100 + " end", "a\nb\tc " * 400, ""]
    full = token_counts(texts)
    for cap in (8, 16, 64, 160):
        capped = token_counts(texts, cap)
        assert ((capped <= cap) == (full <= cap)).all()
        assert (capped[full <= cap] == full[full <= cap]).all()


def test_words_at_least_never_exceeds_the_word_pieces():
    """The bound that spares long texts the tokenizer: never above the full count, on the cases that
    could break it (control characters joining runs, underscores and punctuation splitting them,
    non-ASCII text, which gets no bound), and above the cap it decides the verdict alone."""
    texts = ["abc\x00def ghi", "snake_case_word", "a-b-c!d?e", "Don't stop", "  ", "x" * 300,
             "caf\u00e9 na\u00efve words here", "tab\tnew\nline\rcarriage", "1,000,000 and 3.5km",
             "abc\x7fdef\x1b[0m"]
    full = token_counts(texts)
    bounds = [encoders.words_at_least(t) + 2 for t in texts]
    assert all(b <= f for b, f in zip(bounds, full, strict=True))
    assert bounds[1] == 3 + 2 and bounds[6] == 2  # three runs; non-ASCII: no bound
    long = " ".join(["word"] * 300)
    assert token_counts([long], 160)[0] == 302 and token_counts([long])[0] == 302


def test_one_encode_call_in_flight_while_a_model_loads():
    from concurrent.futures import Future

    pending, done = Future(), Future()
    done.set_result(None)
    assert embed._in_flight({"minilm": pending}) == 1
    assert embed._in_flight({"minilm": done}) == embed._in_flight({}) == embed.WORKERS


def test_spread_is_a_permutation_whose_prefixes_cover_the_range():
    order = embed.spread(10)
    assert sorted(order) == list(range(10)) and order[:2] == [0, 8] and embed.spread(1) == [0]
    assert max(order[:4]) >= 6 and min(order[:4]) == 0  # the first few already span the range


def test_run_encoding_in_parallel_writes_the_vectors_encoded_one_by_one(monkeypatch):
    """Ingest's MiniLM chunks run WORKERS at a time, one torch thread each, in spread order: every
    vector equals the one ``encode_alone`` gives the text alone (bit for bit in bf16, and within the
    last fp32 bits), and every chunk written is in ``written``."""
    inner = TransformerEmbedder(32, bf16=True)
    short = ShortOnlyEmbedder(inner, 32)
    texts = tuple(f"{w} turn number {i} about {'hiking ' * (i % 7)}" for i, w in enumerate(TEXTS * 30))
    hashes = tuple(text_hash(t) for t in texts)
    task = embed.EncodeTask("short", inner.model_id, "encoding short turns (MiniLM)", hashes, texts)
    monkeypatch.setattr(embed, "get_model", lambda mid: short if mid == "short" else inner)
    monkeypatch.setattr(embed, "PROGRESS_STEP", 8)
    monkeypatch.setattr(embed, "WORKERS", 2)
    store = Store()
    rec = []
    written = embed.run_encoding(store, [task], lambda d, t, label: rec.append((d, t)))
    assert sorted(h for _, hs in written for h in hs) == sorted(hashes)
    got = vectors_for(store, "short", list(hashes))
    alone = np.stack([embed.encode_alone(inner, [t])[0] for t in texts[:12]])
    assert np.abs(got[:12] - alone).max() < 1e-6
    assert rec[-1] == (rec[-1][1], rec[-1][1]) and [d for d, _ in rec] == sorted(d for d, _ in rec)


def test_the_load_calibrates_minilm_once_and_the_eta_prior_follows_it(monkeypatch, tmp_path):
    """MiniLM's ETA prior is this machine's: the load times one thread on fixed texts (once per process
    and model); before any calibration the prior is PRIOR_S's."""
    monkeypatch.setattr(embed, "_CALIBRATED", {})
    monkeypatch.setenv("BFR_CACHE_DIR", str(tmp_path))
    enc = TransformerEmbedder(16, bf16=True)
    assert embed.minilm_prior(enc) == embed.minilm_prior(None) == embed.PRIOR_S["minilm"]
    calls = []
    real = embed.encode_alone
    monkeypatch.setattr(embed, "encode_alone", lambda m, texts: calls.append(len(texts)) or real(m, texts))
    done_at = embed._load_clocked(enc)
    assert isinstance(done_at, float) and calls == [4, len(embed.CALIBRATION)]  # a warm-up, then the timed call
    rate = embed._CALIBRATED[enc.model_id]
    assert rate > 0 and embed.minilm_prior(enc) == pytest.approx(rate * embed.CALIBRATION_RATIO)
    assert embed.calibrate(enc) == rate and calls == [4, len(embed.CALIBRATION)]  # measured once


def test_a_calibration_is_remembered_for_the_machine_and_read_before_the_next_load(monkeypatch, tmp_path):
    """The next process on this machine starts from the remembered rate and load time, not PRIOR_S's
    (LoCoMo's 25 % point falls inside MiniLM's load); another model, or an unreadable file, has none."""
    monkeypatch.setattr(embed, "_CALIBRATED", {})
    monkeypatch.setenv("BFR_CACHE_DIR", str(tmp_path))
    enc, other = TransformerEmbedder(16, bf16=True), TransformerEmbedder(32)
    assert embed.remembered(enc) is None and embed.load_prior(enc) is None
    assert embed.minilm_prior(enc) == embed.PRIOR_S["minilm"]
    embed.remember(enc, "minilm", 4e-5)
    embed.remember(enc, "load", 3.2)  # a second measure keeps the first
    embed.remember(other, "minilm", 9e-5)  # a second model keeps the first's
    assert embed.remembered(enc) == 4e-5 and embed.load_prior(enc) == 3.2 and embed.remembered(other) == 9e-5
    assert embed.load_prior(other) is None and embed.load_prior(None) is None
    assert embed.minilm_prior(enc) == pytest.approx(4e-5 * embed.CALIBRATION_RATIO)  # nothing measured in this process
    embed._CALIBRATED[enc.model_id] = 6e-5
    assert embed.minilm_prior(enc) == pytest.approx(6e-5 * embed.CALIBRATION_RATIO)  # this process's measurement first
    saved = json.loads((tmp_path / embed.CALIBRATION_FILE).read_text())
    assert saved == {embed.machine_key(enc): {"minilm": 4e-5, "load": 3.2}, embed.machine_key(other): {"minilm": 9e-5}}
    assert enc.model_id in embed.machine_key(enc) and "torch" in embed.machine_key(enc)
    with pytest.raises(ValueError, match="remember one of"):
        embed.remember(enc, "static", 1.0)
    (tmp_path / embed.CALIBRATION_FILE).write_text("{not json")
    assert embed.remembered(other) is None
    embed.remember(other, "minilm", 7e-5)  # a broken file is replaced, not fatal
    assert embed.remembered(other) == 7e-5
    monkeypatch.setenv("BFR_CACHE_DIR", str(tmp_path / embed.CALIBRATION_FILE / "x"))  # not a directory
    embed.remember(enc, "minilm", 1e-5)  # skipped: the ETA falls back, the ingest goes on
    assert embed.remembered(enc) is None


def test_the_load_remembers_how_long_it_took(monkeypatch, tmp_path):
    monkeypatch.setattr(embed, "_CALIBRATED", {})
    monkeypatch.setenv("BFR_CACHE_DIR", str(tmp_path))
    enc = TransformerEmbedder(16, bf16=True)
    embed._load_clocked(enc)
    assert embed.load_prior(enc) > 0 and embed.remembered(enc) == embed._CALIBRATED[enc.model_id]
