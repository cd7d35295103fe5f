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
    assert bar_text("encoding short turns (MiniLM) · 40 of 90 texts", 250, 1000, 10.0) == \
        "encoding short turns (MiniLM) · 40 of 90 texts: 25% · about 30 s left"
    assert bar_text("writing the dataset to the store", 0, 1, 3.0) == "writing the dataset to the store…"
    assert "left" not in bar_text("x", 1000, 1000, 10.0)


def test_gui_wording():
    msg = f"dataset 'demo' is already in /tmp/x ({'why'}); store unchanged. {CLI_CLASH}"
    assert "--replace" not in gui_error(msg) and "Replace if present" in gui_error(msg)
    assert "Replace if present" in clash_message("demo")
    assert gui_error("/tmp/bfr-upload-abc/up.json: bad", tmp_path="/tmp/bfr-upload-abc/up.json",
                     upload_name="up.json") == "up.json: bad"


def test_commands_name_this_store():
    assert C.ingest_cmd("/a b/s.duckdb") == "bfr ingest locomo ../shared/data/locomo10.json --db '/a b/s.duckdb'"
    assert C.eval_cmds("s.duckdb", ["locomo", "demo"], suff=True)[0] == \
        "bfr eval --db s.duckdb --dataset demo --arms mem0,bfr-text,bfr-mv --sample 50 --suff"


def test_one_display_form_for_turn_ids():
    t = Turn("conv-43:D20:34", "conv-43:S20", 3, "Caroline", "hi", None, "D20:34")
    assert turn_label("conv-43:D20:34", {t.turn_id: t}) == "D20:34"
    assert turn_label("conv-43:D20:34") == "D20:34"  # unknown turn: the scope prefix is cut the same way
    assert turn_label("answer_05d808e6_1_11") == "answer_05d808e6_1_11"


def test_pool_priors_say_what_the_arm_read_from_the_question():
    assert pool_priors({"view": "hybrid", "candidates": []}) == []  # another arm's pool: nothing to say
    assert pool_priors({"named_speaker": "", "date_windows": [], "advice_request": False, "topic_weight": 1.0}) == []
    said = pool_priors({"named_speaker": "Melanie", "date_windows": [["2023-03-13", "2023-03-17"]],
                        "advice_request": True, "topic_weight": 3.0})
    assert said == ["speaker prior on Melanie", "date prior on sessions dated 2023-03-13 to 2023-03-17",
                    "advice request: session topic weight 3.0"]
