"""Every file a ``bfr`` command writes goes through ``bfr_core.outfile``: the options are listed from the
commands' own argument parsers (``cli.command_parser``), so an output option added later is held to
the same checks without this file changing, and one that looks like an output but is not declared
with ``outfile.output_argument`` fails here.

Each declared option is aimed at the store (as given, by a symbolic link, a hard link, a ``..``
spelling), at the store's write-ahead log, and at an existing file without ``--force``: every time
the command exits 2 with one line naming the option, and neither the store, its log nor the old
file changes. A positive control per option shows the command's arguments reach the write.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from reliability_stats import record

from bfr_core.cli import COMMANDS, command_parser, main
from bfr_core.outfile import is_output

# An option named or described like this writes something; it must be declared with output_argument.
LOOKS_LIKE_OUTPUT = re.compile(r"(^|[-_])(out|output|outdir|json|qrels|csv|html|png|save|dump|export|write|dest|log)"
                               r"([-_]|$)")
HELP_SAYS_WRITE = re.compile(r"\b(write|writes|written|output|save|saved)\b", re.I)

# The least each command needs to reach its output (RUN: the template's run id).
MINIMAL: dict[str, list[str]] = {
    "eval": ["--dataset", "demo", "--arms", "mem0", "--quiet", "--limit", "2"],
    "sweep": ["--dataset", "demo", "--budgets", "C0", "--limit", "2", "--no-png", "--quiet", "--arms", "bfr-text"],
    "report": ["RUN"],
    "label-export": [],
    "export-run": ["RUN"],
    "export-data": ["demo", "--quiet"],
    "import-answers": [str(Path(__file__).parent / "fixtures" / "answers_demo.jsonl"), "--dataset", "demo",
                       "--name", "theirs"],
    "judge": ["RUN", "--judge", "rules"],
    "judges": ["RUN"],
    "suspect-keys": ["--dataset", "demo"],
}


def value_options() -> list[tuple[str, object]]:
    out = []
    for name in COMMANDS:
        _, parser = command_parser(name)
        out += [(name, a) for a in parser._actions if a.option_strings and a.nargs != 0]
    return out


def declared_outputs() -> list[tuple[str, str, str]]:
    """(command, option, kind) of every option declared as an output."""
    return [(name, a.option_strings[0], is_output(a)) for name, a in value_options() if is_output(a)]


OUTPUTS = declared_outputs()
STATS: dict[str, int] = {"probes": 0, "changed_stores": 0, "old_files_changed": 0, "not_refused": 0}


@pytest.fixture(scope="module", autouse=True)
def _stats():
    """Counts for bench/checks/bench_reliability.py (``BFR_RELIABILITY_STATS`` names the JSON file)."""
    yield
    record("outputs", {**STATS, "options": len(OUTPUTS)})


def test_every_option_that_looks_like_an_output_is_declared_as_one() -> None:
    undeclared = [f"{name} {a.option_strings[0]}" for name, a in value_options()
                  if not is_output(a) and a.dest != "db"
                  and (any(LOOKS_LIKE_OUTPUT.search(f.lstrip("-")) for f in a.option_strings)
                       or LOOKS_LIKE_OUTPUT.search(a.dest) or HELP_SAYS_WRITE.search(a.help or ""))]
    assert not undeclared, f"declare these with outfile.output_argument and write through outfile: {undeclared}"
    names = {(c, o) for c, o, _ in OUTPUTS}
    assert {("export-run", "--out"), ("export-run", "--qrels"), ("eval", "--json"), ("export-data", "--out"),
            ("report", "--out"), ("label-export", "--out"), ("sweep", "--out")} <= names
    missing = sorted({c for c, _, _ in OUTPUTS} - set(MINIMAL))
    assert not missing, f"add the least arguments of {missing} to MINIMAL"


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> tuple[Path, str]:
    from bfr_core.evaluation.evaluate import RunSpec, evaluate
    from bfr_core.ingest.demo import ensure_demo_store

    d = tmp_path_factory.mktemp("outputs")
    store = ensure_demo_store(d / "template.duckdb", embed=False)
    run_id = evaluate(store, RunSpec("demo", ("mem0",), "", 10, "offline rules", 2))
    store.con.execute("CHECKPOINT")
    store.close()
    return d / "template.duckdb", run_id


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else "absent"


def _files(db: Path) -> dict[str, str]:
    return {p.name: _sha(p) for p in (db, db.with_name(db.name + ".wal"))}


def _symlink(tmp: Path, db: Path) -> str:
    (tmp / "link.jsonl").symlink_to(db)
    return str(tmp / "link.jsonl")


def _hardlink(tmp: Path, db: Path) -> str:
    os.link(db, tmp / "hard.jsonl")
    return str(tmp / "hard.jsonl")


def _dotdot(tmp: Path, db: Path) -> str:
    (tmp / "sub").mkdir()
    return str(tmp / "sub" / ".." / db.parent.name / db.name)


def _other_wal(tmp: Path, db: Path) -> str:
    shutil.copyfile(db, tmp / "other.duckdb")
    return str(tmp / "other.duckdb.wal")


TARGETS: dict[str, Callable[[Path, Path], str]] = {
    "the store": lambda tmp, db: str(db),
    "a symbolic link to the store": _symlink,
    "a hard link to the store": _hardlink,
    "a '..' spelling of the store": _dotdot,
    "the store's write-ahead log": lambda tmp, db: str(db) + ".wal",
    "another DuckDB file's write-ahead log": _other_wal,
}


def _argv(command: str, option: str, target: str, db: Path, run_id: str, *extra: str) -> list[str]:
    return [command, *[run_id if a == "RUN" else a for a in MINIMAL[command]], "--db", str(db), option, target, *extra]


def _store(tmp: Path, template: Path) -> Path:
    (tmp / "store").mkdir()
    db = tmp / "store" / "s.duckdb"
    shutil.copyfile(template, db)
    return db


def _refused(capsys, argv: list[str], option: str) -> None:
    code = main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    STATS["probes"] += 1
    STATS["not_refused"] += int(code != 2)
    assert code == 2, (argv, err)
    assert len(err) == 1 and err[0].startswith(f"bfr {argv[0]}: error: ") and option in err[0], err


@pytest.mark.parametrize("target", list(TARGETS))
@pytest.mark.parametrize(("command", "option", "kind"), OUTPUTS, ids=[f"{c} {o}" for c, o, _ in OUTPUTS])
def test_an_output_option_never_writes_over_the_store_or_its_log(command, option, kind, target, template, tmp_path,
                                                                 capsys) -> None:
    db = _store(tmp_path, template[0])
    aim = TARGETS[target](tmp_path, db)
    before = _files(db)
    _refused(capsys, _argv(command, option, aim, db, template[1], "--force"), option)
    STATS["changed_stores"] += int(_files(db) != before)
    assert _files(db) == before, f"{command} {option} at {target} changed the store"


@pytest.mark.parametrize(("command", "option", "kind"), OUTPUTS, ids=[f"{c} {o}" for c, o, _ in OUTPUTS])
def test_an_output_option_keeps_an_existing_file_without_force_and_writes_a_new_one(command, option, kind, template,
                                                                                    tmp_path, capsys) -> None:
    db = _store(tmp_path, template[0])
    old = tmp_path / "old.jsonl"
    if kind == "folder":
        (tmp_path / "old").mkdir()
        old = tmp_path / "old" / "frontier.json"
    old.write_text("keep me\n", encoding="utf-8")
    aim = str(old.parent if kind == "folder" else old)
    _refused(capsys, _argv(command, option, aim, db, template[1]), option)
    STATS["old_files_changed"] += int(old.read_text(encoding="utf-8") != "keep me\n")
    assert old.read_text(encoding="utf-8") == "keep me\n"
    new = tmp_path / "new" / ("out" if kind == "folder" else "out.jsonl")
    assert main(_argv(command, option, str(new), db, template[1])) == 0, capsys.readouterr().err
    written = new / "frontier.json" if kind == "folder" else new
    assert written.is_file()  # (label-export of a store without labels writes an empty file)
