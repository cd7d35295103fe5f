"""bench/lib/ingest_cache.py: the cache folder of a machine that never calibrated MiniLM."""

from __future__ import annotations

import bench.lib.ingest_cache as B


def test_the_first_machine_cache_links_the_static_model_and_holds_no_calibration(monkeypatch, tmp_path):
    machine = tmp_path / "machine"
    machine.mkdir()
    (machine / "m2v-minilm-l6-v2-256d.npy").write_bytes(b"vectors")
    (machine / "calibration.json").write_text("{}")
    monkeypatch.setenv("BFR_CACHE_DIR", str(machine))
    first = B.first_machine_cache(tmp_path / "first")
    assert sorted(p.name for p in first.iterdir()) == ["m2v-minilm-l6-v2-256d.npy"]
    assert (first / "m2v-minilm-l6-v2-256d.npy").read_bytes() == b"vectors"
    assert B.first_machine_cache(first) == first  # a second call keeps the link
