#!/usr/bin/env bash
# Set up (idempotent) and start the app on the embedded demo store (data/demo.duckdb, created on first start).
# The server listens on 127.0.0.1 only (.streamlit/config.toml). BFR_APP_ADDRESS=0.0.0.0 (or an interface's
# address) opens it to other machines: then set up team mode first (README, "Who may do what").
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
addr=()
if [ -n "${BFR_APP_ADDRESS:-}" ]; then
  addr=(--server.address "$BFR_APP_ADDRESS")
fi
exec .venv/bin/streamlit run app.py "${addr[@]}" "$@"
