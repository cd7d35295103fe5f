"""The CLI under attack: every bad input, argument, output path and odd store gives a one-line error.

Each probe runs ``bfr`` in a subprocess against a fresh copy of a small store (the demo data and
one finished offline run) and checks: exit code 2, one line on stderr naming what is wrong, no
traceback, and the store file byte-identical (sha256 before and after). Kinds:

* ``args``: nonsense numbers and arm lists of ``bfr eval`` (and ``sweep``), an unknown budget,
  ``--prices`` missing or malformed;
* ``outfile``: ``--json`` / ``--out`` onto the store (as given, through a link, by a relative
  path), onto another DuckDB file, onto an existing file without ``--force``, a folder, a path
  under a file, the store's write-ahead log, a folder the user may not write in (``eval``, ``report``,
  ``label-export``, ``sweep``, ``export-run``, ``export-data``; tests/test_cli_outputs.py holds every
  output option of every command to the same checks);
* ``input``: JSON lone-surrogate escapes (JSONL, LoCoMo), dates whose UTC conversion under- or
  overflows (session and question dates), an ISO week date, a 5,000-digit answer or category, a
  valid file with one 10 MB turn (default ingest, embedding on);
* ``store``: a DuckDB file of a future storage version, tables of an older or other shape (no
  ``report`` column, no ``position`` column, ``runs`` a view or a table of other columns), a store in
  a read-only folder (run as an unprivileged user), a read-only command on an unknown run.

Plus: SIGKILL of ``bfr eval --processes 2`` leaves no process of it running. Counts per kind go to
``BFR_RELIABILITY_STATS`` for ``bench/checks/bench_reliability.py``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest

ROOT = Path(__file__).resolve().parents[1]
STATS: dict[str, dict[str, int]] = {}


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "BFR_LOCK_WAIT_S": "2"}


def bfr(*args: str, user: str | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "bfr_core.cli", *args]
    if user is not None:
        cmd = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *cmd]
    return subprocess.run(cmd, cwd=ROOT, env=env(), capture_output=True, text=True, timeout=timeout)


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else "absent"


def files_sha(path: Path) -> dict[str, str]:
    """The store and the WAL DuckDB may keep beside it."""
    return {p.name: sha(p) for p in (path, path.with_name(path.name + ".wal"))}


@dataclass(frozen=True)
class Probe:
    kind: str
    name: str
    argv: Callable[[Path, Path], list[str]]  # (tmp folder, store copy) -> bfr arguments
    store: Callable[[Path, Path], None] | None = None  # turns the copy into an odd store
    user: str | None = None


def record(kind: str, **counts: int) -> None:
    into = STATS.setdefault(kind, {"probes": 0, "tracebacks": 0, "changed_stores": 0, "not_one_line": 0,
                                   "exit_not_2": 0})
    for k, v in counts.items():
        into[k] = into.get(k, 0) + v


# -- inputs ---------------------------------------------------------------------------------------
def jsonl_file(tmp: Path, *, session: dict | None = None, question: dict | None = None, raw: str = "") -> Path:
    s = {"type": "session", "session_id": "s1", "date": "2024-03-01T10:00",
         "turns": [{"speaker": "user", "text": "I bought a tripod."}, {"speaker": "assistant", "text": "Nice."}]}
    q = {"type": "question", "question_id": "q1", "question": "What did I buy?", "answer": "a tripod",
         "gold": ["s1_1"], "date": "2024-03-02"}
    s.update(session or {})
    q.update(question or {})
    path = tmp / "probe.jsonl"
    path.write_text(raw or json.dumps(s) + "\n" + json.dumps(q) + "\n", encoding="utf-8")
    return path


def locomo_file(tmp: Path, raw_category: str = "2", text: str = "hello") -> Path:
    conv = {"speaker_a": "Ann", "speaker_b": "Bo", "session_1_date_time": "10:00 am on 1 June, 2023",
            "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": text},
                          {"speaker": "Bo", "dia_id": "D1:2", "text": "look"}]}
    body = json.dumps([{"sample_id": "c1", "conversation": conv,
                        "qa": [{"question": "Q?", "answer": "a", "evidence": ["D1:1"], "category": 2}]}])
    path = tmp / "locomo.json"
    path.write_text(body.replace('"category": 2', f'"category": {raw_category}'), encoding="utf-8")
    return path


def lone_surrogate_jsonl(tmp: Path) -> Path:
    return jsonl_file(tmp, raw=json.dumps({"type": "session", "session_id": "s1", "turns": [
        {"speaker": "user", "text": "broken XX here"}]}).replace("XX", "\\ud800") + "\n" + json.dumps(
        {"type": "question", "question_id": "q1", "question": "?", "answer": "a", "gold": ["s1_1"]}) + "\n")


def _surrogate_locomo(tmp: Path) -> Path:
    path = locomo_file(tmp, text="a XX b")
    path.write_text(path.read_text(encoding="utf-8").replace("XX", "\\udc00"), encoding="utf-8")
    return path


def big_number_jsonl(tmp: Path) -> Path:
    return jsonl_file(tmp, raw=json.dumps({"type": "session", "session_id": "s1", "turns": [
        {"speaker": "user", "text": "t"}]}) + "\n" + '{"type": "question", "question_id": "q1", "question": "?", '
        '"answer": ' + "7" * 5000 + ', "gold": ["s1_1"]}\n')


def ten_mb_turn(tmp: Path) -> Path:
    words = ("tripod shutter release camera strap lens " * 250_000)[: 10 * 1024 * 1024]
    return jsonl_file(tmp, session={"turns": [{"speaker": "user", "text": words}, {"speaker": "assistant",
                                                                                  "text": "ok"}]})


def ingest(kind: str, make: Callable[[Path], Path], *extra: str) -> Callable[[Path, Path], list[str]]:
    return lambda tmp, db: ["ingest", kind, str(make(tmp)), "--db", str(db), "--name", "probe", *extra]


# -- odd stores -------------------------------------------------------------------------------------
def sql(*statements: str) -> Callable[[Path, Path], None]:
    def change(tmp: Path, db: Path) -> None:
        con = duckdb.connect(str(db))
        for s in statements:
            con.execute(s)
        con.execute("CHECKPOINT")
        con.close()
    return change


def future_version(tmp: Path, db: Path) -> None:
    """Storage version 1000 in the main header, its checksum (DuckDB's: 5381 xor-ed with each 64-bit
    word times 0xbf58476d1ce4e5b9, over the block after the checksum) kept right."""
    data = bytearray(db.read_bytes())

    def words() -> list[int]:
        return [int.from_bytes(data[o : o + 8], "little") for o in (8, 16)]

    old = words()
    data[12:20] = (1000).to_bytes(8, "little")  # the version number after the magic "DUCK"
    check = int.from_bytes(data[0:8], "little")
    for a, b in zip(old, words(), strict=True):
        check ^= (a * 0xBF58476D1CE4E5B9 ^ b * 0xBF58476D1CE4E5B9) & (2**64 - 1)
    data[0:8] = check.to_bytes(8, "little")
    db.write_bytes(bytes(data))


def read_only_folder(tmp: Path, db: Path) -> None:
    os.chmod(db.parent, 0o555)
    os.chmod(db, 0o444)


EVAL = ["eval", "--dataset", "demo", "--arms", "mem0", "--quiet"]


def ev(*extra: str) -> Callable[[Path, Path], list[str]]:
    return lambda tmp, db: [*EVAL, "--db", str(db), *extra]


def ev_at(make: Callable[[Path, Path], list[str]]) -> Callable[[Path, Path], list[str]]:
    return lambda tmp, db: [*EVAL, "--db", str(db), *make(tmp, db)]


def link_to(tmp: Path, db: Path, name: str = "link.json") -> str:
    (tmp / name).symlink_to(db)
    return str(tmp / name)


def other_duckdb(tmp: Path, name: str = "other.duckdb") -> str:
    duckdb.connect(str(tmp / name)).close()
    return str(tmp / name)


def existing(tmp: Path, name: str = "old.json") -> str:
    (tmp / name).write_text("keep me\n", encoding="utf-8")
    return str(tmp / name)


def under_file(tmp: Path) -> str:
    (tmp / "plain.txt").write_text("x", encoding="utf-8")
    return str(tmp / "plain.txt" / "out.json")


def prices(tmp: Path, text: str) -> str:
    (tmp / "prices.json").write_text(text, encoding="utf-8")
    return str(tmp / "prices.json")


REPORT = lambda run: lambda tmp, db: ["report", run, "--db", str(db)]  # noqa: E731

PROBES = [
    *(Probe("args", f"eval {' '.join(a)}", ev(*a)) for a in (
        ("--arms", ""), ("--arms", ","), ("--k", "0"), ("--k", "-5"), ("--limit", "0"), ("--limit", "-1"),
        ("--processes", "0"), ("--processes", "-2"), ("--rpm", "-5"), ("--max-retries", "-1"),
        ("--max-concurrent", "-1"), ("--budget", "C42"), ("--sample", "0"), ("--workers", "0"))),
    Probe("args", "eval --prices missing", ev_at(lambda t, d: ["--prices", str(t / "nope.json")])),
    Probe("args", "eval --prices malformed", ev_at(lambda t, d: ["--prices", prices(t, "{not json")])),
    Probe("args", "eval --prices wrong shape", ev_at(lambda t, d: ["--prices", prices(t, '{"openai": {"g": "1"}}')])),
    Probe("args", "sweep --limit 0", lambda t, d: ["sweep", "--db", str(d), "--dataset", "demo", "--limit", "0",
                                                    "--out", str(t / "sw")]),
    Probe("outfile", "eval --json store", ev_at(lambda t, d: ["--json", str(d)])),
    Probe("outfile", "eval --json link to store", ev_at(lambda t, d: ["--json", link_to(t, d)])),
    Probe("outfile", "eval --json relative store", ev_at(lambda t, d: ["--json", os.path.relpath(d, ROOT)])),
    Probe("outfile", "eval --json other duckdb", ev_at(lambda t, d: ["--json", other_duckdb(t)])),
    Probe("outfile", "eval --json other duckdb --force", ev_at(lambda t, d: ["--json", other_duckdb(t), "--force"])),
    Probe("outfile", "eval --json existing", ev_at(lambda t, d: ["--json", existing(t)])),
    Probe("outfile", "eval --json folder", ev_at(lambda t, d: ["--json", str(t)])),
    Probe("outfile", "eval --json under a file", ev_at(lambda t, d: ["--json", under_file(t)])),
    Probe("outfile", "report --out store", lambda t, d: ["report", "RUN", "--db", str(d), "--out", str(d)]),
    Probe("outfile", "report --out link", lambda t, d: ["report", "RUN", "--db", str(d), "--out", link_to(t, d)]),
    Probe("outfile", "report --out other duckdb", lambda t, d: ["report", "RUN", "--db", str(d), "--out",
                                                                 other_duckdb(t)]),
    Probe("outfile", "label-export --out link", lambda t, d: ["label-export", "--db", str(d), "--out",
                                                               link_to(t, d, "labels.csv")]),
    Probe("outfile", "label-export --out existing", lambda t, d: ["label-export", "--db", str(d), "--out",
                                                                   existing(t, "labels.csv")]),
    Probe("outfile", "sweep --out store", lambda t, d: ["sweep", "--db", str(d), "--dataset", "demo", "--out", str(d)]),
    Probe("outfile", "export-run --out store", lambda t, d: ["export-run", "RUN", "--db", str(d), "--out", str(d)]),
    Probe("outfile", "export-run --out store --force", lambda t, d: ["export-run", "RUN", "--db", str(d), "--out",
                                                                      str(d), "--force"]),
    Probe("outfile", "export-run --qrels link to store", lambda t, d: ["export-run", "RUN", "--db", str(d), "--qrels",
                                                                        link_to(t, d, "q.txt")]),
    Probe("outfile", "export-run --out existing", lambda t, d: ["export-run", "RUN", "--db", str(d), "--out",
                                                                 existing(t, "run.trec")]),
    Probe("outfile", "export-run --qrels store's log", lambda t, d: ["export-run", "RUN", "--db", str(d), "--qrels",
                                                                      f"{d}.wal", "--force"]),
    Probe("outfile", "export-data --out store's log --force", lambda t, d: ["export-data", "demo", "--db", str(d),
                                                                             "--out", f"{d}.wal", "--force"]),
    Probe("outfile", "export-run --out unwritable folder", lambda t, d: ["export-run", "RUN", "--db", str(d), "--out",
                                                                          str(d.parent / "run.trec")],
          read_only_folder, user="65534"),
    Probe("input", "jsonl lone surrogate", ingest("jsonl", lone_surrogate_jsonl, "--no-embed")),
    Probe("input", "locomo lone surrogate", ingest("locomo", _surrogate_locomo, "--no-embed")),
    Probe("input", "session date underflows", ingest("jsonl", lambda t: jsonl_file(
        t, session={"date": "0001-01-01T00:00+01:00"}), "--no-embed")),
    Probe("input", "session date overflows", ingest("jsonl", lambda t: jsonl_file(
        t, session={"date": "9999-12-31T23:59:59-01:00"}), "--no-embed")),
    Probe("input", "question date underflows", ingest("jsonl", lambda t: jsonl_file(
        t, question={"date": "0001-01-01T00:00+01:00"}), "--no-embed")),
    Probe("input", "question date overflows", ingest("jsonl", lambda t: jsonl_file(
        t, question={"date": "9999-12-31T23:59:59-01:00"}), "--no-embed")),
    Probe("input", "ISO week date", ingest("jsonl", lambda t: jsonl_file(t, session={"date": "2024-W10-1"}),
                                           "--no-embed")),
    Probe("input", "5000-digit answer", ingest("jsonl", big_number_jsonl, "--no-embed")),
    Probe("input", "5000-digit category", ingest("locomo", lambda t: locomo_file(t, "9" * 5000), "--no-embed")),
    Probe("input", "one 10 MB turn", ingest("jsonl", ten_mb_turn)),
    Probe("store", "future storage version: eval", ev(), future_version),
    Probe("store", "future storage version: report", REPORT("RUN"), future_version),
    Probe("store", "no report column: eval", ev(), sql("ALTER TABLE datasets DROP COLUMN report")),
    Probe("store", "no report column: trace", lambda t, d: ["trace", "q1", "--db", str(d)],
          sql("ALTER TABLE datasets DROP COLUMN report")),
    Probe("store", "no position column: eval", ev(), sql("ALTER TABLE questions DROP COLUMN position")),
    Probe("store", "no position column: report", REPORT("RUN"), sql("ALTER TABLE questions DROP COLUMN position")),
    Probe("store", "runs of other columns: eval", ev(), sql("DROP TABLE runs", "CREATE TABLE runs (x INTEGER)")),
    Probe("store", "runs of other columns: report", REPORT("RUN"),
          sql("DROP TABLE runs", "CREATE TABLE runs (x INTEGER)")),
    Probe("store", "runs a view: eval", ev(), sql("DROP TABLE runs", "CREATE VIEW runs AS SELECT 1 AS x")),
    Probe("store", "runs a view: report", REPORT("RUN"), sql("DROP TABLE runs", "CREATE VIEW runs AS SELECT 1 AS x")),
    Probe("store", "unknown run: report", REPORT("no-such-run")),
    Probe("store", "unknown budget: eval", ev("--budget", "X1")),
    Probe("store", "read-only folder: eval", ev(), read_only_folder, user="65534"),
    Probe("store", "read-only folder: ingest", ingest("jsonl", lambda t: jsonl_file(t), "--no-embed"),
          read_only_folder, user="65534"),
]


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> tuple[Path, str]:
    """The demo store with one finished offline run; (file, run id)."""
    from bfr_core.evaluation.evaluate import RunSpec, evaluate
    from bfr_core.ingest.demo import ensure_demo_store

    d = tmp_path_factory.mktemp("cli")
    store = ensure_demo_store(d / "template.duckdb", embed=False)
    run_id = evaluate(store, RunSpec("demo", ("mem0",), "", 10, "offline rules", 2))
    store.con.execute("CHECKPOINT")
    store.close()
    return d / "template.duckdb", run_id


@pytest.mark.parametrize("probe", PROBES, ids=[p.name for p in PROBES])
def test_probe_is_one_clean_line_and_leaves_the_store(probe, template, tmp_path):
    src, run_id = template
    if probe.user:  # an unprivileged user must reach the folder (pytest's own is the owner's only)
        tmp_path = Path(tempfile.mkdtemp(prefix="bfr-probe-"))
        os.chmod(tmp_path, 0o755)
    folder = tmp_path / "store"
    folder.mkdir()
    db = folder / "store.duckdb"
    shutil.copyfile(src, db)
    if probe.store:
        probe.store(tmp_path, db)
    argv = [run_id if a == "RUN" else a for a in probe.argv(tmp_path, db)]
    before = files_sha(db)
    out = bfr(*argv, user=probe.user)
    lines = out.stderr.strip().splitlines()
    tb = "Traceback" in out.stderr
    changed = files_sha(db) != before
    record(probe.kind, probes=1, tracebacks=int(tb), changed_stores=int(changed),
           not_one_line=int(len(lines) != 1), exit_not_2=int(out.returncode != 2))
    if probe.user:
        os.chmod(folder, 0o755)
        shutil.rmtree(tmp_path, ignore_errors=True)
    assert not tb, out.stderr[-3000:]
    assert out.returncode == 2, (out.returncode, out.stderr[-1500:])
    assert len(lines) == 1 and lines[0].startswith(f"bfr {argv[0]}: error: "), out.stderr
    assert not changed, "the store file changed"


def test_error_names_what_is_wrong(template, tmp_path):
    db = tmp_path / "s.duckdb"
    shutil.copyfile(template[0], db)
    said = {
        "--k": bfr(*EVAL, "--db", str(db), "--k", "0").stderr,
        "store": bfr(*EVAL, "--db", str(db), "--json", str(db)).stderr,
        "line 1": bfr("ingest", "jsonl", str(lone_surrogate_jsonl(tmp_path)), "--db", str(db), "--no-embed").stderr,
        "'date'": bfr("ingest", "jsonl", str(jsonl_file(tmp_path, session={"date": "2024-W10-1"})), "--db", str(db),
                      "--no-embed").stderr,
    }
    for needle, text in said.items():
        assert needle in text, (needle, text)


def test_good_output_is_written_whole_and_force_replaces(template, tmp_path):
    db = tmp_path / "s.duckdb"
    shutil.copyfile(template[0], db)
    out = tmp_path / "r.md"
    assert bfr("report", template[1], "--db", str(db), "--out", str(out)).returncode == 0
    first = out.read_text(encoding="utf-8")
    assert first.startswith("# Run ") and bfr("report", template[1], "--db", str(db), "--out", str(out)).returncode == 2
    assert bfr("report", template[1], "--db", str(db), "--out", str(out), "--force").returncode == 0
    assert out.read_text(encoding="utf-8") == first and sorted(p.name for p in tmp_path.iterdir()) == ["r.md", "s.duckdb"]


# -- the app's address ---------------------------------------------------------------------------
@pytest.mark.parametrize(("inherited", "asked", "bound"), [
    ("0.0.0.0", None, "127.0.0.1"), (None, None, "127.0.0.1"), ("0.0.0.0", "0.0.0.0", "0.0.0.0"),
    (None, "10.1.2.3", "10.1.2.3")])
def test_app_sh_listens_on_loopback_unless_bfr_app_address_says(tmp_path, inherited, asked, bound):
    """scripts/app.sh with set-up and streamlit stood in for: an inherited STREAMLIT_SERVER_ADDRESS
    (container images set 0.0.0.0) never reaches streamlit; only BFR_APP_ADDRESS opens the app."""
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "app.sh", tmp_path / "scripts" / "app.sh")
    (tmp_path / "scripts" / "setup.sh").write_text("exit 0\n", encoding="utf-8")
    fake = tmp_path / ".venv" / "bin" / "streamlit"
    fake.parent.mkdir(parents=True)
    fake.write_text('#!/usr/bin/env bash\necho "args: $*"\necho "env: ${STREAMLIT_SERVER_ADDRESS-unset}"\n',
                    encoding="utf-8")
    fake.chmod(0o755)
    e = {k: v for k, v in os.environ.items() if k not in ("STREAMLIT_SERVER_ADDRESS", "BFR_APP_ADDRESS")}
    e.update({"STREAMLIT_SERVER_ADDRESS": inherited} if inherited else {})
    e.update({"BFR_APP_ADDRESS": asked} if asked else {})
    out = subprocess.run(["bash", str(tmp_path / "scripts" / "app.sh")], env=e, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert f"args: run app.py --server.address {bound}" in out.stdout
    assert "env: unset" in out.stdout


# -- processes ----------------------------------------------------------------------------------
def session_members(sid: int) -> list[int]:
    out = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                fields = (p / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == sid and fields[0] != "Z":
                out.append(int(p.name))
    return out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sigkill_of_eval_with_processes_leaves_no_orphan(template, tmp_path):
    db = tmp_path / "s.duckdb"
    shutil.copyfile(template[0], db)
    proc = subprocess.Popen([sys.executable, "-m", "bfr_core.cli", *EVAL[:-1], "--arms", "mem0,bfr-mv",
                             "--db", str(db), "--processes", "2", "--quiet"], cwd=ROOT, env=env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while len(session_members(proc.pid)) < 3 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)  # until the workers are up
        assert proc.poll() is None and len(session_members(proc.pid)) >= 3, "the workers never started"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        left = session_members(proc.pid)
        for _ in range(100):  # the kernel signals the workers at once; give them 10 s to go
            if not left:
                break
            time.sleep(0.1)
            left = session_members(proc.pid)
        record("processes", probes=1, orphans=len(left))
        assert not left, f"{len(left)} process(es) outlived the killed eval"
    finally:
        for pid in session_members(proc.pid):
            os.kill(pid, signal.SIGKILL)


@pytest.fixture(scope="module", autouse=True)
def _stats():
    yield
    if out := os.environ.get("BFR_RELIABILITY_STATS"):
        Path(out).write_text(json.dumps({"cli": STATS}), encoding="utf-8")
