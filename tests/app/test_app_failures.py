"""Failures page: the per-question pivot, filters, per-type tables, and opening Trace."""

from urllib.parse import quote

from conftest import app_test, texts


def _page():
    at = app_test().run()
    at.switch_page("pages/failures.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _table(at):
    return next(d.value for d in at.dataframe if "question_id" in d.value.columns)


def test_one_row_per_question_with_every_arm(app_db):
    at = _page()
    df = _table(at)
    assert len(df) == 6  # the demo's scoreable questions
    for arm in ("mem0", "bfr-mv"):
        for m in ("GH", "ER", "CER", "size", "F1", "J", "Suff"):
            assert f"{arm} {m}" in df.columns
    types = at.dataframe[0].value
    assert "overall †" in list(types["question type"]) and {"mem0", "bfr-mv", "mem0 size", "bfr-mv size"} <= set(types.columns)


def test_arms_are_compared_at_a_common_set_size_by_default(app_db):
    at = _page()
    assert at.segmented_control(key="fail_size").value == "10 turns each"  # mem0's 10 against bfr-mv's larger sets
    types = at.dataframe[0].value
    assert set(types["mem0 size"]) == {10.0} and max(types["bfr-mv size"]) <= 10
    assert (_table(at)["bfr-mv size"] <= 10).all()
    assert "Every set cut to its first **10** turns" in texts(at)
    # a per-type cell carries its interval, and a type of fewer than 10 questions is marked
    assert any("[" in str(v) for v in types["bfr-mv"]) and any("†" in t for t in types["question type"])
    at.segmented_control(key="fail_size").set_value("each arm's own set").run()
    assert any("Not an equal-budget comparison" in w.value for w in at.warning)
    assert max(at.dataframe[0].value["bfr-mv size"]) > 10


def test_filters(app_db):
    at = _page()
    at.multiselect(key="fail_qtypes").select("temporal-reasoning").run()
    assert set(_table(at)["qtype"]) == {"temporal-reasoning"}
    at.multiselect(key="fail_qtypes").unselect("temporal-reasoning").run()
    at.selectbox(key="fail_hit").select("bfr-mv").run()
    at.selectbox(key="fail_miss").select("mem0").run()
    at.segmented_control(key="fail_on").set_value("CER").run()
    df = _table(at)
    assert len(df) >= 1 and (df["bfr-mv CER"] >= 1).all() and (df["mem0 CER"] < 1).all()
    at.selectbox(key="fail_hit").select("—").run()
    at.selectbox(key="fail_hns").select("mem0").run()
    df = _table(at)
    assert ((df["mem0 GH"] == 1) & (df["mem0 Suff"] == 0)).all() and len(df) >= 1
    at.selectbox(key="fail_hns").select("—").run()
    # any column: text contains, with characters that would break string-built SQL or a query
    at.selectbox(key="fail_col").select("question").run()
    at.text_input(key="fail_val").input("'; DROP TABLE results; --").run()
    at.selectbox(key="fail_op").select("contains").run()
    assert len(_table(at)) == 0 and not at.exception
    at.text_input(key="fail_val").input("camera").run()
    assert list(_table(at)["question_id"]) == ["q1"]
    assert "1 of 6 questions" in texts(at)


def test_open_in_trace_switches_page_with_query_params(app_db):
    at = _page()
    at.selectbox(key="fail_pick").select("q3").run()
    at.selectbox(key="fail_open_arm").select("mem0").run()
    at.button(key="fail_open").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == "Trace"
    assert at.selectbox(key="trace_question").value == "q3"
    assert at.selectbox(key="trace_arm").value == "mem0"
    at.switch_page("pages/trace.py")  # AppTest would otherwise rerun the page it last switched to
    at.button(key="trace_all").click().run()
    assert "Stored trace from eval run" in texts(at)


def test_selecting_a_table_row_opens_it_in_trace(app_db):
    at = _page()
    at.session_state["fail_table"] = {"selection": {"rows": [2], "columns": [], "cells": []}}
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == "Trace"
    assert at.selectbox(key="trace_question").value == "q3"


def test_frontier_is_this_stores(app_db):
    from ui import resources as R
    from ui.tables import store_frontier

    at = _page()
    assert not at.exception
    pts = store_frontier(R.open_store(str(app_db)), "demo")
    assert {p["arm"] for p in pts} == {"mem0", "bfr-mv"}
    assert "bench/out" not in texts(at).split("bfr sweep")[0]  # no committed file is shown as this store's
    assert len(at.get("plotly_chart")) == 1
    assert any("bfr sweep --db" in c.value and str(app_db) in c.value for c in at.code)


def test_budget_frontier_from_sweep_output(app_db, tmp_path):
    import json

    pts = [{"arm": a, "budget": f"C{i}", "calls": c, "size": 10 + 5 * c, "gold_hit": q, "er": q - 5, "cer": q - 10,
            "n": 6} for a, base in (("bfr-text", 50), ("bfr-mv", 52)) for i, c in enumerate((0, 1, 3, 6))
           for q in [base + 4 * c]]
    path = tmp_path / "frontier.json"
    path.write_text(json.dumps({"points": pts}), encoding="utf-8")
    at = _page()
    at.text_input(key="fail_sweep_path").input(str(path)).run()
    assert not at.exception and not at.error
    assert at.selectbox(key="fail_fy").options == ["cer", "er", "gold_hit"]
    assert len(at.get("plotly_chart")) == 1
    at.text_input(key="fail_sweep_path").input(str(tmp_path / "missing.json")).run()
    assert at.error and "missing.json" in at.error[0].value.replace("\\", "")  # shown escaped


def _other_store(template_db, tmp_path):
    """A second store beside the default one, told apart by its question texts."""
    import shutil

    from bfr_core.store import Store

    other = tmp_path / "other.duckdb"
    shutil.copy(template_db, other)
    s = Store(other)
    s.con.execute("UPDATE questions SET text = 'OTHERSTORE ' || text")
    s.con.execute("CHECKPOINT")
    s.close()
    return other


def test_open_in_trace_keeps_a_non_default_store(app_db, template_db, tmp_path):
    """A row click switches pages with st.switch_page, which drops widget state: the store chosen in
    the sidebar must still be the one Trace opens (issue 29: it opened the default store)."""
    other = _other_store(template_db, tmp_path)
    at = app_test().run()
    at.sidebar.text_input(key="app_store").input(str(other)).run()
    at.switch_page("pages/failures.py").run()
    at.selectbox(key="fail_pick").select("q3").run()
    at.button(key="fail_open").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == "Trace"
    assert at.sidebar.text_input(key="app_store").value == str(other)
    assert "OTHERSTORE" in texts(at)
    at.session_state["fail_table"] = {"selection": {"rows": [], "columns": [], "cells": []}}
    at.switch_page("pages/failures.py").run()  # and back, then a table row
    assert at.sidebar.text_input(key="app_store").value == str(other)
    at.session_state["fail_table"] = {"selection": {"rows": [1], "columns": [], "cells": []}}
    at.run()
    assert at.title[0].value == "Trace" and at.selectbox(key="trace_question").value == "q2"
    assert "OTHERSTORE" in texts(at) and at.sidebar.text_input(key="app_store").value == str(other)


def test_trace_links_name_a_non_default_store(app_db, template_db, tmp_path):
    """The table's "open" links start a new tab (a new session): they carry the store, and a first
    run with ``?store=`` opens it."""
    other = _other_store(template_db, tmp_path)
    at = app_test().run()
    at.sidebar.text_input(key="app_store").input(str(other)).run()
    at.switch_page("pages/failures.py").run()
    links = list(_table(at)["trace"])
    assert all(f"store={quote(str(other), safe='')}" in u for u in links), links[:2]
    fresh = app_test()
    fresh.query_params["store"] = str(other)
    fresh.run()
    assert fresh.sidebar.text_input(key="app_store").value == str(other)
    default = _page()
    assert not any("store=" in u for u in _table(default)["trace"])


def test_numbers_have_meaning(app_db):
    """Issue 29: Gold Hit, ER, CER, J, Suff were defined nowhere; J and Suff did not say over how many
    rows nor who judged; cells showed None."""
    from ui.tables import MEANING

    at = _page()
    body = texts(at)
    for name in ("Gold Hit", "Turn Hit", "ER", "CER", "judge", "Suff"):
        assert MEANING[name][:40] in body.replace("\\", ""), name
    at.segmented_control(key="fail_metric").set_value("judge").run()
    types = at.dataframe[0].value
    assert "mem0 decided" in types.columns and "6 of 6" in list(types["mem0 decided"])
    assert "offline rules" in texts(at)
    assert not types.isna().any().any() and "None" not in types.astype(str).to_numpy()


def test_a_run_with_no_defined_quality_shows_no_frontier_and_leaves_later_runs_whole(app_db, tmp_path):
    """Every question scoreable but none with gold turns: no quality figure exists, so no frontier (it
    crashed the page, and the empty choice it kept crashed every run shown after it)."""
    import json

    from bfr_core.cli import main
    from bfr_core.ingest import ingest
    from bfr_core.store import Store

    src = tmp_path / "nogold.jsonl"
    src.write_text("\n".join(json.dumps(r) for r in (
        {"type": "session", "session_id": "s", "turns": [{"speaker": "a", "text": "we saw a fox"}]},
        {"type": "question", "question_id": "n1", "question": "what did we see?", "answer": "a fox",
         "scope": "default", "gold": [], "scoreable": True})) + "\n", encoding="utf-8")
    store = Store(app_db)
    ingest(store, "jsonl", src, name="nogold", embed=False)
    store.close()
    assert main(["eval", "--db", str(app_db), "--dataset", "nogold", "--arms", "mem0", "--quiet",
                 "--json", str(tmp_path / "o.json")]) == 0
    at = _page()
    runs = at.selectbox(key="fail_run").options
    nogold = next(r for r in runs if r.startswith("nogold"))
    for run in (nogold, next(r for r in runs if not r.startswith("nogold"))):
        at.selectbox(key="fail_run").select(run).run()
        assert not at.exception, [e.value for e in at.exception]
    at.selectbox(key="fail_run").select(nogold).run()
    assert not at.exception and "no frontier to draw" in texts(at)


def test_the_question_table_fits_the_page_and_wraps_the_question(app_db):
    at = _page()
    table = next(d for d in at.dataframe if "question_id" in d.value.columns)
    shown = list(table.proto.column_order)
    assert "question" in shown and "mem0 GH" in shown and "bfr-mv size" in shown
    assert "mem0 ER" not in shown and "bfr-mv F1" not in shown  # the compact default
    assert table.proto.row_height >= 50  # room for the question text to wrap
    at.toggle(key="fail_all_cols").set_value(True).run()
    table = next(d for d in at.dataframe if "question_id" in d.value.columns)
    assert "mem0 ER" in list(table.proto.column_order)
