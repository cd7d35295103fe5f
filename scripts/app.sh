#!/usr/bin/env bash
# Set up (idempotent) and start the app on the embedded demo store (data/demo.duckdb, created on first start).
# The server listens on 127.0.0.1 only. BFR_APP_ADDRESS=0.0.0.0 (or an interface's address) opens it to other
# machines: then set up team mode first (README, "Who may do what"). An inherited STREAMLIT_SERVER_ADDRESS
# (container images often set 0.0.0.0) would override .streamlit/config.toml, so it is dropped and the
# address is always passed explicitly.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
unset STREAMLIT_SERVER_ADDRESS
exec .venv/bin/streamlit run app.py --server.address "${BFR_APP_ADDRESS:-127.0.0.1}" "$@"
