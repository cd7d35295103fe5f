#!/usr/bin/env bash
# Create .venv (if missing) and install the project into it: CPU torch from the local wheel first,
# so sentence-transformers does not pull a CUDA build, then the package with the given extras.
# Every version comes from requirements.lock (a constraints file; refresh it with scripts/lock.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-}"
# --no-compile: pip would byte-compile every installed file (torch, ray, spacy ...), most of which nothing
# imports; Python compiles the modules a process does import, once, on first use.
LOCK=(-c requirements.lock --no-compile)
PY="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --no-compile --upgrade pip >/dev/null 2>&1 || true
.venv/bin/python -m pip install -q "${LOCK[@]}" torch==2.13.0 2>&1 | grep -v "is ignored" || true
if [ -n "$extras" ]; then
  .venv/bin/python -m pip install -q "${LOCK[@]}" -e ".[$extras]" 2>&1 | grep -v "is ignored" || true
else
  .venv/bin/python -m pip install -q "${LOCK[@]}" -e . 2>&1 | grep -v "is ignored" || true
fi
.venv/bin/python -c "import bfr_core, torch, sentence_transformers, duckdb, streamlit" \
  || { echo "setup: installation incomplete" >&2; exit 1; }
