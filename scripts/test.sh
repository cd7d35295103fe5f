#!/usr/bin/env bash
# Set up (idempotent) and run the whole test suite: lint, unit, CLI end to end on the demo data and on
# ../shared/data when present, AppTest, and the real-browser test in headless Chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test,ray
# Debian's Chromium for the browser tests (Playwright is pointed at /usr/bin/chromium; it never downloads one).
if [ ! -x /usr/bin/chromium ]; then
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
      || echo "test.sh: could not install chromium; browser tests will be skipped" >&2
  else
    echo "test.sh: /usr/bin/chromium missing and cannot apt-get; browser tests will be skipped" >&2
  fi
fi
# The real local model (llama-cpp-python + Qwen2.5 GGUF) for the end-to-end LLM test; the build is cached
# by pip after the first time. BFR_SKIP_LOCAL_LLM=1 skips it (that test then reports itself skipped).
if [ "${BFR_SKIP_LOCAL_LLM:-0}" != 1 ]; then
  bash scripts/install_local_llm.sh || echo "test.sh: local LLM install failed; its test will be skipped" >&2
fi
.venv/bin/python scripts/check_lock.py  # installed versions == requirements.lock, or fail listing the differences
.venv/bin/ruff check .
# Two worker processes (pytest-xdist), each running whole test files (--dist loadfile: a file's tests keep
# their order and share its module fixtures); much of the suite waits on subprocesses, servers and
# browsers, so two workers keep both cores busy. Files are handed out slowest first, by the times the last
# recorded run measured (tests/suite_times.py; --no-loadscope-reorder keeps that order). BFR_TEST_WORKERS=0
# runs in one process. With two workers the local model computes with one thread: its threads wait on
# each other, so two of them sharing a core with the other worker slow every local-model test.
if [ "${BFR_TEST_WORKERS:-2}" != 0 ] && [ "${BFR_TEST_WORKERS:-2}" != 1 ]; then
  export BFR_LLM_THREADS="${BFR_LLM_THREADS:-1}"
fi
exec .venv/bin/python -m pytest -n "${BFR_TEST_WORKERS:-2}" --dist loadfile --no-loadscope-reorder "$@"
