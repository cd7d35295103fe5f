"""Our arm shows as ``conv-fusion`` on every page: a run stored under its alias ``bfr`` (never rewritten)
reads as conv-fusion on Home, Failures and Trace, Evaluate offers conv-fusion, and no string of the app's
pages or ui names ``bfr`` as an arm (only as the command line's program)."""

import ast
import re
from pathlib import Path

import pytest
from conftest import ROOT, add_fake_run, app_test, texts

from bfr_core.cli import COMMANDS
from bfr_core.store import Store

OLD = "demo-old0001"


@pytest.fixture()
def old_db(app_db):
    """The app's demo store with a second finished run whose arms are stored as mem0 and ``bfr``."""
    s = Store(app_db)
    add_fake_run(s, arms=("mem0", "bfr"), run_id=OLD)
    assert s.cursor().execute("SELECT DISTINCT arm FROM results WHERE run_id = ? ORDER BY arm",
                              [OLD]).fetchall() == [("bfr",), ("mem0",)]
    s.close()
    return app_db


def _page(page=None, query=None):
    at = app_test()
    if query:
        at.query_params.update(query)
    at.run()
    if page:
        at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _no_bfr_arm(values):
    """No shown value names the arm ``bfr`` (bfr-mv, bfr-text are the paper's and stay)."""
    return not any(re.search(r"(?<![\w-])bfr(?![\w-])", str(v)) for v in values)


def test_home_shows_the_old_run_as_conv_fusion(old_db):
    at = _page()
    at.selectbox(key="home_run").select(OLD).run()
    assert not at.exception, [e.value for e in at.exception]
    results = next(d.value for d in at.dataframe if "Gold Hit" in d.value.columns)
    assert list(results["arm"]) == ["mem0", "conv-fusion"]
    labels = at.selectbox(key="home_run").options
    assert any("mem0, conv-fusion" in o for o in labels) and _no_bfr_arm(labels)


def test_failures_pivots_the_old_run_under_conv_fusion_and_opens_its_stored_trace(old_db):
    at = _page("pages/failures.py")
    at.selectbox(key="fail_run").select(OLD).run()
    assert not at.exception, [e.value for e in at.exception]
    df = next(d.value for d in at.dataframe if "question_id" in d.value.columns)
    assert {"conv-fusion GH", "conv-fusion CER", "conv-fusion size"} <= set(df.columns)
    assert _no_bfr_arm(df.columns) and _no_bfr_arm(at.dataframe[0].value.columns)
    assert at.selectbox(key="fail_open_arm").options == ["mem0", "conv-fusion"]
    assert _no_bfr_arm(at.selectbox(key="fail_hit").options)


def test_trace_link_with_the_alias_shows_the_stored_trace_as_conv_fusion(old_db):
    at = _page("pages/trace.py", {"dataset": "demo", "question": "q3", "arm": "bfr", "run": OLD})
    assert at.selectbox(key="trace_arm").value == "conv-fusion"
    assert "bfr" not in at.selectbox(key="trace_arm").options
    at.button(key="trace_all").click().run()
    assert not at.exception, [e.value for e in at.exception]
    body = texts(at)
    assert f"Stored trace from eval run `{OLD}`" in body and "conv-fusion" in body
    assert not any("is run live here instead" in i.value for i in at.info)


def test_evaluate_offers_conv_fusion(app_db):
    at = _page("pages/evaluate.py")
    options = at.multiselect(key="eval_arms").options
    assert "conv-fusion" in options and "bfr" not in options


def _strings(path: Path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value


def test_no_page_or_ui_string_names_bfr_as_an_arm():
    """``bfr`` in the app's text is the command line's program (``bfr eval`` ...), never an arm's label."""
    program = re.compile(r"(?<![\w./\[-])bfr(?![\w.\]-])(?!`{0,2}\s+(?:command|is not on))(?!`?\s+(?:"
                         + "|".join(re.escape(c) for c in COMMANDS) + r")\b)")
    files = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py")), *sorted((ROOT / "ui").glob("*.py"))]
    bad = [f"{p.relative_to(ROOT)}:{line}: {text[max(0, m.start() - 30):m.end() + 30]!r}"
           for p in files for line, text in _strings(p) for m in program.finditer(text)]
    assert not bad, bad
    assert program.search("arms: bfr, mem0") and program.search('"bfr"') and not program.search("`bfr eval`")
