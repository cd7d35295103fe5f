"""Mem0 (BM25 top-k) and A-Mem (dense top-k) arms through the real pipeline and registry."""

from __future__ import annotations

import json

import numpy as np

from bfr_core.pipeline import resolve, run_query
from bfr_core.records import Query, Scope, Turn
from bfr_core.retrieval.scope import build_views

TURNS = tuple(Turn(f"t{i}", "s", i, "user", text) for i, text in enumerate([
    "I ordered a remote shutter release online", "the weather was nice", "my tripod is old",
    "the shutter release arrived on February 10th", "we baked bread",
]))


class Bow:
    model_id = "bow-baselines@16"
    dim = 16

    def encode(self, texts, progress=None):
        out = np.zeros((len(texts), self.dim), np.float32)
        for i, t in enumerate(texts):
            for w in t.lower().split():
                out[i, sum(map(ord, w)) % self.dim] += 1
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)


def views():
    model = Bow()
    return build_views(Scope("d", "h", ("s",)), TURNS, model.encode([t.text for t in TURNS]), model)


def test_registry_points_here():
    from bfr_core.baselines import topk as baselines

    assert resolve("mem0") is baselines.mem0 and resolve("amem") is baselines.amem


def test_mem0_is_bm25_topk_one_step():
    q = Query("q1", "h", "When did the shutter release arrive?")
    trace = run_query(views(), q, "mem0", dataset_id="d", k=2)
    (step,) = trace.steps
    assert step.kind == "topk" and step.calls == 1 and len(step.evidence) == 2
    assert step.evidence == tuple(h["turn_id"] for h in step.data["hits"])
    assert set(step.evidence) == {"t0", "t3"}
    assert step.data["view"] == "bm25" and step.data["cue"] == q.text and step.data["k"] == 2
    json.dumps(step.data)  # traces are stored as JSON


def test_amem_is_dense_topk_and_k_comes_from_context():
    q = Query("q1", "h", "shutter release arrived")
    trace = run_query(views(), q, "amem", dataset_id="d", k=3)
    (step,) = trace.steps
    assert step.data["view"] == "dense" and len(step.evidence) == 3 and step.evidence[0] == "t3"
    scores = [h["score"] for h in step.data["hits"]]
    assert scores == sorted(scores, reverse=True)
    assert trace.evidence == step.evidence and trace.calls == 1
