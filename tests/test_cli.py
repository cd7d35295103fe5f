from bfr_core.cli import COMMANDS, main


def test_help_lists_every_command(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in COMMANDS)


def test_unknown_command_is_exit_2(capsys):
    assert main(["frobnicate"]) == 2
    assert "unknown command 'frobnicate'" in capsys.readouterr().err


def test_eval_on_missing_store_is_one_line_error(tmp_path, capsys):
    rc = main(["eval", "--db", str(tmp_path / "none.duckdb"), "--benchmark", "locomo", "--arms", "mem0"])
    assert rc == 2
    err = capsys.readouterr().err
    assert "does not exist" in err and "Traceback" not in err


def test_eval_rejects_unknown_arm(tmp_path, capsys):
    rc = main(["eval", "--db", str(tmp_path / "x.duckdb"), "--benchmark", "locomo", "--arms", "mem0,zzz"])
    assert rc == 2 and "unknown arm(s) zzz" in capsys.readouterr().err


def test_provider_local_without_the_model_is_one_line(tmp_path, monkeypatch, capsys):
    """Issue 29: the README's `--provider local` eval after the README's set-up (no local model) gave
    a traceback; it is one line naming scripts/install_local_llm.sh, exit 2."""
    import sys

    from bfr_core.ingest.demo import ensure_demo_store

    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # `import llama_cpp` raises ImportError
    db = tmp_path / "s.duckdb"
    ensure_demo_store(db, embed=False).close()
    assert main(["eval", "--db", str(db), "--dataset", "demo", "--arms", "mem0", "--provider", "local",
                 "--limit", "1", "--answer"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "scripts/install_local_llm.sh" in err and "Traceback" not in err


def test_eval_says_when_vectors_are_computed_as_it_goes(tmp_path, monkeypatch, capsys):
    """Issue 26: a dataset written without vectors (`bfr ingest --no-embed`) is usable at once; `bfr eval`
    says in one line before it starts that each scope's vectors are computed on its first question."""
    import numpy as np

    from bfr_core.evaluation import dryrun
    from bfr_core.ingest.demo import ensure_demo_store
    from bfr_core.retrieval.embed import store_vectors
    from bfr_core.retrieval.encoders import default_spec
    from bfr_core.retrieval.views.common import index_text
    from bfr_core.store import text_hash

    monkeypatch.setattr(dryrun, "dry_run", lambda *a, **k: {})  # no retrieval: only the line before it
    monkeypatch.setattr(dryrun, "render_plan", lambda plan: "plan")
    db = tmp_path / "s.duckdb"
    ensure_demo_store(db, embed=False).close()
    argv = ["eval", "--db", str(db), "--dataset", "demo", "--arms", "mem0", "--limit", "1", "--dry-run"]
    assert main(argv) == 0
    notes = [line for line in capsys.readouterr().err.splitlines() if "no vectors yet" in line]
    assert len(notes) == 1 and notes[0].startswith("note: 126 of 126 turn texts of 'demo' have no vectors yet")
    assert "on its first question" in notes[0]
    store = ensure_demo_store(db, embed=False)  # every text cached: no line
    spec = default_spec()
    hashes = sorted({text_hash(index_text(t)) for s in store.scopes("demo") for t in store.scope_turns("demo", s.scope_id)})
    for mid in [spec.base] + ([spec.short] if spec.short else []):
        store_vectors(store, mid, hashes, np.zeros((len(hashes), 4), np.float32))
    store.close()
    assert main(argv) == 0
    assert "no vectors yet" not in capsys.readouterr().err


def test_a_reader_that_closes_the_pipe_ends_the_command_quietly():
    """`bfr report RUN | head` must not end in a BrokenPipeError traceback."""
    import subprocess
    import sys

    code = ("import bfr_core.commands.report as r\n"
            "r.run = lambda args: print('row\\n' * 500_000)\n"
            "from bfr_core.cli import main\n"
            "raise SystemExit(main(['report', 'x', '--db', 'y']))\n")
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.stdout is not None and p.stdout.readline() == b"row\n"
    p.stdout.close()  # as head does after its lines
    _, err = p.communicate(timeout=60)
    assert p.returncode == 141 and b"Traceback" not in err, err.decode()
