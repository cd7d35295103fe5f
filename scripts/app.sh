#!/usr/bin/env bash
# Set up (idempotent) and start the app on the embedded demo store (data/demo.duckdb, created on first start).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/streamlit run app.py "$@"
