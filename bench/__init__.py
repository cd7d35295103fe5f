"""Benches: scripts that measure the workbench on real data and write JSON to ``bench/out/``.

Run each from the repository root as a module, e.g. ``.venv/bin/python -m bench.quality.bench_ours``.
"""
