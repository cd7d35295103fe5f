"""The app's pure helpers: store-path checks, the ingest bar's text, GUI error wording, commands, turn labels,
the trace's pool priors."""

from bfr_core.records import Turn
from bfr_core.store import Store
from ui import commands as C
from ui import storepath
from ui.ingesting import CLI_CLASH, bar_text, clash_message, gui_error
from ui.steps import pool_priors
from ui.widgets import turn_label


def test_store_path_problems(tmp_path):
    missing = tmp_path / "nope" / "s.duckdb"
    assert "No store at" in storepath.problem(missing, is_default=False, create=False)
    assert "does not exist either" in storepath.problem(missing, is_default=False, create=False)
    assert storepath.problem(missing, is_default=False, create=True) is None
    assert storepath.problem(missing, is_default=True, create=False) is None  # the demo store is built
    assert "folder" in storepath.problem(tmp_path, is_default=False, create=False)
    junk = tmp_path / "junk.duckdb"
    junk.write_text("not a database at all, clearly")
    assert "not a DuckDB store" in storepath.problem(junk, is_default=False, create=False)
    real = tmp_path / "real.duckdb"
    Store(real).close()
    assert storepath.problem(real, is_default=False, create=False) is None


def test_size_counts_the_wal(tmp_path):
    p = tmp_path / "s.duckdb"
    p.write_bytes(b"x" * 1000)
    (tmp_path / "s.duckdb.wal").write_bytes(b"x" * 2_000_000)
    assert storepath.size_mb(p) == 2.001


def test_bar_text_has_stage_share_and_eta():
    assert bar_text("encoding short turns (MiniLM) · 40 of 90 texts", 250, 1000, 30.0) == \
        "encoding short turns (MiniLM) · 40 of 90 texts: 25% · about 1 min 30 s left"
    # no ETA in a stage's first 20 s (loading and warm-up make the early pace say little)
    assert bar_text("encoding", 250, 1000, 10.0) == "encoding: 25% · estimating time left"
    assert bar_text("encoding", 0, 1000, 60.0) == "encoding: 0% · estimating time left"


def test_a_folder_or_a_beam_path_is_guessed_beam_and_shared_beam_folders_are_offered(tmp_path):
    from ui.ingesting import guess_kind, shared_choices, shared_label

    conv = tmp_path / "beam" / "100K" / "1"
    conv.mkdir(parents=True)
    (tmp_path / "beam" / "100K" / "10").mkdir()
    (tmp_path / "beam" / "100K" / "2").mkdir()
    (tmp_path / "locomo10.json").write_text("[]")
    assert guess_kind(str(conv)) == "beam" and guess_kind(str(tmp_path / "beam" / "100K")) == "beam"
    assert guess_kind(str(tmp_path)) == "beam"  # any folder: only BEAM loads from one
    assert guess_kind("/x/locomo10.json") == "locomo" and guess_kind("/x/locomo_plus.json") == "locomo-plus"
    assert guess_kind("/x/longmemeval_s.json.gz") == "longmemeval" and guess_kind("/x/mine.jsonl") == "jsonl"
    got = [p.relative_to(tmp_path).as_posix() for p in shared_choices(tmp_path)]
    assert got == ["locomo10.json", "beam", "beam/100K", "beam/100K/1", "beam/100K/2", "beam/100K/10"]
    assert shared_label(conv, tmp_path) == "beam/100K/1 · one BEAM conversation"
    assert shared_label(tmp_path / "beam" / "100K", tmp_path) == "beam/100K · one BEAM tier"
    assert bar_text("writing the dataset to the store", 0, 1, 3.0) == "writing the dataset to the store…"
    assert "left" not in bar_text("x", 1000, 1000, 10.0)


def test_gui_wording():
    msg = f"dataset 'demo' is already in /tmp/x ({'why'}); store unchanged. {CLI_CLASH}"
    assert "--replace" not in gui_error(msg) and "Replace if present" in gui_error(msg)
    assert "Replace if present" in clash_message("demo")
    assert gui_error("/tmp/bfr-upload-abc/up.json: bad", tmp_path="/tmp/bfr-upload-abc/up.json",
                     upload_name="up.json") == "up.json: bad"


def test_commands_name_this_store(monkeypatch, tmp_path):
    monkeypatch.delenv("BFR_DATA", raising=False)  # the default: ../shared/data beside the repository
    assert C.ingest_cmd("/a b/s.duckdb") == \
        ".venv/bin/bfr ingest locomo ../shared/data/locomo10.json --db '/a b/s.duckdb'"
    monkeypatch.setenv("BFR_DATA", str(tmp_path / "elsewhere"))  # a copy elsewhere is named by its own path
    assert C.ingest_cmd("s.duckdb") == f".venv/bin/bfr ingest locomo {tmp_path}/elsewhere/locomo10.json --db s.duckdb"
    sets = [{"dataset_id": d, "counts": {"scoreable": n}} for d, n in (("demo", 3), ("nogold", 0), ("locomo", 1986))]
    assert C.eval_cmds("s.duckdb", sets, suff=True) == [  # none for a dataset with nothing to score
        ".venv/bin/bfr eval --db s.duckdb --dataset locomo --arms mem0,bfr-text,bfr-mv --sample 50 --suff",
        ".venv/bin/bfr eval --db s.duckdb --dataset demo --arms mem0,bfr-text,bfr-mv --sample 50 --suff"]


def test_commands_run_as_printed(tmp_path):
    """Every command the app prints runs from the repository folder as printed (issue 29: a bare `bfr`
    is not on PATH after scripts/app.sh): the README's program, arguments its subcommand parses."""
    import argparse
    import importlib
    import shlex

    from bfr_core.cli import COMMANDS
    from bfr_core.ingest.sources import PROJECT

    db = str(tmp_path / "a b.duckdb")
    for cmd in (C.ingest_cmd(db), C.ingest_cmd(db, "longmemeval"), C.eval_cmd(db, "demo", suff=True, provider="local"),
                C.sweep_cmd(db, "demo", "out"), C.finish_cmd(db, "jsonl", "/d a/x.jsonl", "my set")):
        program, name, *rest = shlex.split(cmd)
        assert program == C.BFR and f"{C.BFR} {name}" in (PROJECT / "README.md").read_text()
        parser = argparse.ArgumentParser(prog=f"bfr {name}", exit_on_error=False)
        importlib.import_module(COMMANDS[name][0]).add_arguments(parser)
        args = vars(parser.parse_args(rest))
        assert args.get("db") == db, cmd


def test_one_display_form_for_turn_ids():
    t = Turn("conv-43:D20:34", "conv-43:S20", 3, "Caroline", "hi", None, "D20:34")
    assert turn_label("conv-43:D20:34", {t.turn_id: t}) == "D20:34"
    assert turn_label("conv-43:D20:34") == "D20:34"  # unknown turn: the scope prefix is cut the same way
    assert turn_label("answer_05d808e6_1_11") == "answer_05d808e6_1_11"


def test_pool_priors_say_what_the_arm_read_from_the_question():
    assert pool_priors({"view": "hybrid", "candidates": []}) == []  # another arm's pool: nothing to say
    assert pool_priors({"named_speaker": "", "date_windows": []}) == []
    said = pool_priors({"named_speaker": "Melanie", "date_windows": [["2023-03-13", "2023-03-17"]]})
    assert said == ["speaker prior on Melanie", "date prior on sessions dated 2023-03-13 to 2023-03-17"]
    line = pool_priors({"regime": "remark", "signals": {"form": "remark", "bm25_top_z": 1.2, "term_share": 0.4,
                                                        "agreement": 0.0}})
    assert line == ["regime: remark (form remark, BM25 top z 1.2, terms found 0.4, lexical/dense top-10 agreement 0.0)"]


def test_ranks_shown_from_one_and_retained_counts_add_up():
    from ui.steps import _rows, retained_by_view

    assert [r["rank"] for r in _rows([{"turn_id": "a", "rank": 0}, {"turn_id": "b", "rank": 1}])] == [1, 2]
    assert _rows(["a"]) == [{"turn_id": "a"}]
    actions = [{"view": "text", "candidates": [{"turn_id": t} for t in "abcd"]},
               {"view": "entity", "candidates": [{"turn_id": t} for t in "cdef"]},
               {"view": "session", "skipped": True}]
    per_view = retained_by_view(actions, ["a", "c", "d", "e", "z"])
    assert per_view == [(3, 0), (1, 2), (0, 0)]  # c, d offered by both: counted under text
    assert sum(first for first, _ in per_view) == 4  # the five retained less z, which no view listed


def _model_requirements_page():
    from bfr_core.roles.decomposer import Recorded
    from ui.steps import model_requirements

    model_requirements(Recorded(("date the strap was ordered", "date it arrived"), "local:tiny", "2026-12-02"),
                       thin=True)


def test_offline_requirements_show_the_recorded_model_ones_and_the_way_to_a_model():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_model_requirements_page, default_timeout=30).run()
    assert not at.exception, [e.value for e in at.exception]
    body = "\n".join(str(m.value) for m in (*at.markdown, *at.info))
    recorded = body.replace("\\", "")  # markdown escapes
    assert "recorded from local:tiny on 2026-12-02" in recorded
    assert "scripts/install_local_llm.sh" in body and "Provider" in body
    assert "trace with it" in body and "bench/out/" in body  # the measured time, with its JSON
    assert at.dataframe[0].value["requirement"].tolist() == ["date the strap was ordered", "date it arrived"]


def test_pool_priors_say_what_the_associative_step_searched_with():
    said = pool_priors({"antecedent": {"source": "local:qwen", "statement": "I planned a marathon."}})
    assert said == ['associative step (local:qwen): also searched with "I planned a marathon."']
    assert pool_priors({"antecedent": {"source": "offline rules (undecided)", "statement": ""}}) == [
        "associative step (offline rules (undecided)): also searched with no earlier message"]
    assert pool_priors({"antecedent": None}) == []


def test_the_data_pages_export_holds_a_store_session_of_its_own(tmp_path):
    """Streamlit calls the download's data after the page's run: in team (shared) mode the store is open only
    inside a session, so the export opens one, and lets the file go when it is done."""
    from bfr_core.ingest.corpus import corpus_lines
    from bfr_core.ingest.demo import ensure_demo_store
    from ui.ingesting import corpus_file, export_name

    db = tmp_path / "s.duckdb"
    ensure_demo_store(db, embed=False).close()
    shared = Store(db, shared=True)
    text = corpus_file(shared, "demo", blind=True)()
    assert not shared.holds_lock()  # the session ended with the export
    plain = Store(db, read_only=True)
    assert text == "".join(corpus_lines(plain, "demo", blind=True)) and text.count("\n") == 1
    assert export_name("conv 1/é:x", True) == "conv_1_é_x-blind.jsonl" and export_name("demo", False) == "demo.jsonl"


def test_pool_priors_name_the_clauses_the_remark_regime_scored_apart():
    said = pool_priors({"clauses": {"mode": "mean", "texts": ["I quit the gym", "I still run every morning"]}})
    assert said == ['dense part over its 2 clauses (mean of their similarities): "I quit the gym" · '
                    '"I still run every morning"']
    assert pool_priors({"clauses": None}) == []
