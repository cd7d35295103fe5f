"""ui.markup: stored and user-given strings render as themselves, on their own and on every page.

The pages' Markdown sources (as AppTest records them) are rendered by a CommonMark renderer: a
hostile store path (a crafted ``?store=`` link) or dataset name adds no image, link or tag, and a
code span shows the name unescaped.
"""

from __future__ import annotations

import html
import re

import pytest
from conftest import app_test
from markdown_it import MarkdownIt

from bfr_core import pipeline
from bfr_core.ingest import ingest
from bfr_core.ingest.demo import demo_file
from bfr_core.store import Store
from ui.markup import code, text

MD = MarkdownIt("commonmark").enable("table").enable("strikethrough")
HOST = "198.51.100.7"  # TEST-NET-2: nothing answers there
HOSTILE = [
    f"x`![i](http://{HOST}/p.png)` [a](http://{HOST})",
    f"<img src=http://{HOST}/i.png>",
    f"![i](http://{HOST}/i.png)",
    "a``b ``` c",
    "`lead",
    "trail`",
    " both ",
    f"one\n\n![i](http://{HOST}/i.png)",
    r"$\href{http://evil}{x}$ :red[x] :material/home:",
    "--dataset 'it''s' \\-\\-",
]


def _unsafe(source: str) -> list[str]:
    """What rendering ``source`` adds beyond text: images, links, HTML."""
    out = MD.render(source)
    return re.findall(r"<img|<a |<(?!/?(?:p|code|br|em|strong|ul|ol|li|h\d)\b)[a-z]", out)


@pytest.mark.parametrize("s", HOSTILE)
def test_text_renders_as_itself(s):
    out = MD.render(text(s))
    assert _unsafe(text(s)) == []
    plain = html.unescape(re.sub(r"<[^>]+>", "", out))
    assert re.sub(r"\s+", " ", plain).strip() == re.sub(r"\s+", " ", s).strip()


@pytest.mark.parametrize("s", HOSTILE)
def test_code_span_holds_the_string_verbatim(s):
    out = MD.render(code(s))
    spans = re.findall(r"<code>(.*?)</code>", out, re.S)
    assert len(spans) == 1 and _unsafe(code(s)) == []
    assert html.unescape(spans[0]) == " ".join(s.splitlines())  # never backslash-escaped inside


def test_code_of_a_command_is_copyable():
    cmd = ".venv/bin/bfr eval --db 'my store.duckdb' --dataset demo --arms mem0,bfr-mv"
    assert code(cmd) == f"`{cmd}`"


def _sources(at) -> list[str]:
    out = []
    for kind in ("markdown", "caption", "title", "header", "subheader", "success", "info", "warning", "error"):
        out += [str(getattr(el, "value", "")) for el in at.get(kind)]
    return out


@pytest.fixture()
def hostile_store(tmp_path, monkeypatch):
    import streamlit as st
    from conftest import fake_run

    monkeypatch.setattr(pipeline, "run", fake_run)
    path = tmp_path / "store.duckdb"
    s = Store(path)
    ingest(s, "jsonl", demo_file(), name=HOSTILE[0], embed=False)
    s.close()
    monkeypatch.setenv("BFR_STORE", str(path))
    yield path
    st.cache_data.clear()
    st.cache_resource.clear()


def test_hostile_store_link_error_is_text(hostile_store, tmp_path):
    at = app_test()
    bad = str(tmp_path / f"![i](http://{HOST}/p.png)" / "x`y.duckdb")
    at.query_params["store"] = bad
    at.run()
    assert not at.exception
    assert at.error and "No store at" in at.error[0].value
    assert all(_unsafe(s) == [] for s in _sources(at)), [s for s in _sources(at) if _unsafe(s)]
    assert f"`{bad}`" in at.error[0].value  # the path as typed, copyable


@pytest.mark.parametrize("page", ["home", "data", "trace", "demo", "evaluate", "failures", "annotate"])
def test_hostile_dataset_name_adds_nothing_to_any_page(hostile_store, page):
    at = app_test().run()
    at.switch_page(f"pages/{page}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    bad = [s for s in _sources(at) if _unsafe(s)]
    assert bad == []


def _render_hostile_step() -> None:
    """A step of an imported system whose name was chosen to inject (AppTest runs this as a script)."""
    from bfr_core.records import Step
    from ui.steps import StepView, render_step

    name = "x`![i](http://198.51.100.7/p.png)` [a](http://198.51.100.7)"
    render_step(0, Step("other", f"{name} stored evidence", (), 0, {}), StepView("demo", {}))


def test_trace_step_heading_with_a_hostile_system_name():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_render_hostile_step, default_timeout=30).run()
    assert not at.exception, [e.value for e in at.exception]
    heads = [s.value for s in at.subheader]
    assert heads and all(_unsafe(h) == [] for h in heads) and all(_unsafe(s) == [] for s in _sources(at))
    assert "198.51.100.7" in MD.render(heads[0])  # shown, as text
