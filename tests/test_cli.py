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
