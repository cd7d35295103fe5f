"""Reliability figures: runs the seven reliability test files and writes bench/out/reliability.json.

Each test file records what it tried (``BFR_RELIABILITY_STATS`` names the JSON file it writes):
inputs fuzzed per ingest format and how many were refused or ingested, kills and rows surviving a
crash, labels saved by concurrent annotators, faults the wire server injected, pages checked for a
planted key, planted-key fragments found (secrets: every echo form in the store bytes, the tables,
CLI output and the Trace page), and the CLI probes per kind (args, outfile, input, store,
processes) with their tracebacks, stores whose bytes changed and orphan processes.
Also: every output option of every command aimed at the store, its log and an old file
(``output_options``), ``import-run --replace`` killed, interrupted and on a full disk
(``import_replace``), plug-in arms returning bad ids and hanging under Ctrl-C (``plugin_arms``:
``interrupt_s`` from Ctrl-C to exit, ``interrupt_timeouts`` runs still waiting a minute after it), odd
run files (``runfiles``), and every page of the real app in headless Chromium with hostile dataset
names and a crafted ``?store=`` link (``offline_browser``: requests and loaded URLs naming a host other
than 127.0.0.1; not measured, and so not passed, without /usr/bin/chromium). ``records_lost`` adds up every row a test expected and did not find.
Targets: 0 failures, 0 records lost, 0 tracebacks, 0 key fragments, 0 changed stores (by any probe
or output option), 0 orphans, 0 requests off 127.0.0.1. The machine load is recorded beside.

Usage: ``.venv/bin/python -m bench.checks.bench_reliability`` (ten to thirty minutes on 2 shared cores);
``--only plugins,cli`` reruns those files and keeps the rest of the last run's results.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "bench" / "out" / "reliability.json"
FILES = {
    "ingest_fuzz": "tests/test_reliability_ingest_fuzz.py",
    "crash": "tests/test_reliability_crash.py",
    "annotators": "tests/test_reliability_annotators.py",
    "model_faults": "tests/test_reliability_model_faults.py",
    "injection": "tests/test_reliability_injection.py",
    "secrets": "tests/test_reliability_secrets.py",
    "cli": "tests/test_reliability_cli.py",
    "imports": "tests/test_reliability_imports.py",
    "plugins": "tests/test_reliability_plugins.py",
    "outputs": "tests/test_cli_outputs.py",
    "runfiles": "tests/test_runfiles.py",
    "browser_offline": "tests/app/test_browser_offline.py::test_hostile_names_fetch_nothing",
}


def run_one(name: str, path: str, tmp: Path) -> dict:
    stats = tmp / f"{name}.json"
    env = {**os.environ, "BFR_RELIABILITY_STATS": str(stats)}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", path], cwd=ROOT,
                          env=env, capture_output=True, text=True)
    tail = done.stdout.strip().splitlines()[-1:] if done.stdout.strip() else []
    figures = json.loads(stats.read_text(encoding="utf-8")).get(name, {}) if stats.exists() else {}
    failed = re.search(r"(\d+) failed", tail[0]) if tail else None
    return {"passed": done.returncode == 0, "failed_tests": int(failed.group(1)) if failed else int(done.returncode != 0),
            "summary": tail[0] if tail else "", "seconds": round(
        time.perf_counter() - start, 1), **figures}


def probe_totals(cli: dict, secrets: dict) -> dict:
    """Tracebacks, key fragments, changed stores and orphans over the probe kinds (targets: all 0)."""
    kinds = {k: v for k, v in cli.items() if isinstance(v, dict)}
    return {
        "probes_by_kind": {k: v.get("probes", 0) for k, v in kinds.items()} | {"secrets": secrets.get("probes", 0)},
        "tracebacks": sum(v.get("tracebacks", 0) for v in kinds.values()) + secrets.get("tracebacks", 0),
        "key_fragments": secrets.get("key_fragments", 0),
        "changed_stores": sum(v.get("changed_stores", 0) for v in kinds.values()),
        "not_one_line_or_exit_2": sum(v.get("not_one_line", 0) + v.get("exit_not_2", 0) for v in kinds.values()),
        "orphan_processes": kinds.get("processes", {}).get("orphans", 0),
    }


def offline_browser(result: dict) -> dict:
    """Pages visited with hostile names and the requests among them off 127.0.0.1 (target: 0, measured)."""
    pages = result.get("hostile_pages", 0)
    return {"measured": bool(pages) and "skipped" not in result.get("summary", ""), "pages": pages,
            "requests_recorded": result.get("hostile_requests", 0), "urls_loaded": result.get("hostile_loaded_urls", 0),
            "requests_off_127_0_0_1": result.get("foreign_requests", 0) + result.get("foreign_loaded_urls", 0),
            "test": FILES["browser_offline"], "passed": result.get("passed", False)}


def main(argv: list[str] | None = None) -> int:
    """``--only a,b`` reruns those files and keeps the others' results from the last reliability.json
    (``rerun_only`` names them, so a figure's run can be told)."""
    args = argv if argv is not None else sys.argv[1:]
    only = args[1].split(",") if args[:1] == ["--only"] and len(args) == 2 else None
    if only is not None and (not OUT.exists() or set(only) - set(FILES)):
        raise SystemExit(f"--only takes names among {', '.join(FILES)}, and needs an earlier {OUT.name}")
    load_before = os.getloadavg()
    earlier = json.loads(OUT.read_text(encoding="utf-8"))["by_file"] if only is not None else {}
    with tempfile.TemporaryDirectory() as tmp:
        results = {name: run_one(name, path, Path(tmp)) if only is None or name in only else earlier[name]
                   for name, path in FILES.items()}
    fuzz = results["ingest_fuzz"]
    inputs = {k: fuzz.get(k, 0) for k in ("locomo", "longmemeval", "jsonl")}
    faults = results["model_faults"].get("faults_injected", 0) + results["model_faults"].get("unusable_replies", 0)
    lost = (results["crash"].get("rows_lost", 0) + results["annotators"].get("labels_lost", 0)
            + results["model_faults"].get("rows_lost", 0) + results["imports"].get("rows_lost", 0)
            + results["plugins"].get("rows_lost", 0))
    imports, plugins, outputs = results["imports"], results["plugins"], results["outputs"]
    report = {
        "inputs_tried": {**inputs, "total": sum(inputs.values())},
        "inputs_refused_cleanly": {k: fuzz.get(f"{k}_refused", 0) for k in inputs},
        "inputs_ingested": {k: fuzz.get(f"{k}_ingested", 0) for k in inputs},
        "faults_injected": {"llm_http_and_unusable_replies": faults, "sigkill": results["crash"].get("kills", 0),
                            "gzip_bombs": sum(fuzz.get(f"{k}_bomb", 0) for k in inputs)},
        "labels_saved_concurrently": results["annotators"].get("labels_saved", 0),
        "records_lost": lost,
        "probes": (probes := probe_totals(results["cli"], results["secrets"])),
        "output_options": {"options_checked": outputs.get("options", 0), "probes": outputs.get("probes", 0),
                           "store_bytes_changed": outputs.get("changed_stores", 0),
                           "old_files_changed": outputs.get("old_files_changed", 0),
                           "not_refused": outputs.get("not_refused", 0)},
        "import_replace": {"sigkills": imports.get("kills", 0), "interrupted": imports.get("interrupted_replaces", 0),
                           "full_disk": imports.get("full_disk_replaces", 0), "rows_lost": imports.get("rows_lost", 0),
                           "tracebacks": imports.get("tracebacks", 0),
                           "unfinished_runs_marked_finished": imports.get("unfinished_runs_finished", 0)},
        "plugin_arms": plugins,
        "offline_browser": (browser := offline_browser(results["browser_offline"])),
        "failures": sum(r["failed_tests"] for r in results.values()),
        "all_passed": all(r["passed"] for r in results.values()),
        "rerun_only": only,
        "load_avg_1_5_15": {"before": [round(x, 2) for x in load_before],
                            "after": [round(x, 2) for x in os.getloadavg()]},
        "by_file": results,
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in report.items() if k != "by_file"}, indent=2))
    bad = (lost + probes["tracebacks"] + probes["key_fragments"] + probes["changed_stores"] + probes["orphan_processes"]
           + report["failures"] + imports.get("tracebacks", 0) + plugins.get("interrupt_tracebacks", 0)
           + plugins.get("interrupt_timeouts", 0)
           + sum(v for k, v in report["output_options"].items() if k not in ("options_checked", "probes"))
           + browser["requests_off_127_0_0_1"] + (not browser["measured"]))
    return 0 if report["all_passed"] and bad == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
