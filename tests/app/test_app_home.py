"""Home page and the navigation frame: store, provider, Refresh, links."""

from conftest import app_test, texts


def test_home_shows_store_contents_and_links(app_db):
    at = app_test().run()
    assert not at.exception
    body = texts(at)
    assert str(app_db) in body or "store.duckdb" in body
    df = at.dataframe[0].value
    assert list(df["dataset"]) == ["demo"]
    assert int(df["turns"][0]) == 126
    assert "1 evaluation run (1 finished)" in body
    # provider selector shows offline rules plainly when no model is configured
    assert at.sidebar.selectbox(key="app_provider").value == "offline rules"
    assert "offline rules" in body and "scripts/install_local_llm.sh" in body  # and how to get a model


def test_refresh_button_reruns_cleanly(app_db):
    at = app_test().run()
    at.sidebar.button[0].click().run()
    assert not at.exception
    assert at.dataframe[0].value["questions"][0] == 7


def test_bad_store_path_shows_error(app_db, tmp_path):
    at = app_test().run()
    bad = tmp_path / "dir_not_file"
    bad.mkdir()
    at.sidebar.text_input(key="app_store").input(str(bad)).run()
    assert at.error, "an unopenable store must be reported in an error box"


def test_home_suggests_evaluating_the_users_dataset(app_db, tmp_path):
    """Issue 29: Home suggested `--dataset demo` after LoCoMo was loaded; the user's own dataset comes
    first, and the command is the README's `.venv/bin/bfr`."""
    from bfr_core.ingest import ingest
    from bfr_core.ingest.demo import write_demo
    from bfr_core.store import Store

    s = Store(app_db)
    ingest(s, "jsonl", write_demo(tmp_path / "mine.jsonl"), name="mine", embed=False)
    s.cursor().execute("DELETE FROM runs")  # no finished run: Home shows the eval step's command
    s.close()
    body = texts(app_test().run())
    assert f".venv/bin/bfr eval --db {app_db} --dataset mine" in body
    assert "--dataset demo" not in body


def test_the_demo_store_opens_without_encoding(tmp_path):
    """Issue 29: "Opening the store…" took 3.5 min on a fresh clone's first visit (the demo ingest
    encoded every text and found names first). The app builds it without them; the dense and entity
    views fill their caches on first use."""
    from bfr_core.retrieval.embed import cached_count
    from bfr_core.store import Store
    from ui import resources as R

    path = tmp_path / "demo.duckdb"
    R.build_demo(path)
    s = Store(path, read_only=True)
    assert s.counts("demo")["turns"] == 126
    assert cached_count(s) == 0
    s.close()


def test_home_shows_the_latest_runs_figures_at_a_common_set_size(app_db):
    at = app_test().run()
    assert not at.exception, [e.value for e in at.exception]
    results = next(d.value for d in at.dataframe if "Gold Hit" in d.value.columns)
    assert list(results["arm"]) == ["mem0", "bfr-mv"]
    assert set(results["set size"]) == {10.0}  # bfr-mv's larger sets cut to mem0's 10
    assert all("[" in v for v in results["Gold Hit"])  # with its interval
    body = texts(at)
    assert "Compared at **10 turns each**" in body and "report demo-fake0001" in body
    assert at.get("plotly_chart"), "a chart of the per-arm figures"
    assert at.segmented_control(key="home_measure").value == "cer"  # complete evidence: the paper's measure
    at.segmented_control(key="home_measure").set_value("gold_hit").run()
    assert not at.exception, [e.value for e in at.exception]
    links = [(p.proto.page, p.proto.label, p.proto.query_string) for p in at.get("page_link")]
    assert ("failures", "Per question on Failures", "run=demo-fake0001") in links
    # the "Start here" steps are links, and the README's --benchmark form is named
    assert ("data", "1. Load a benchmark", "") in links and ("demo", "2. Watch one question being answered", "") in links
    assert "--benchmark locomo" in body
    assert {"data", "trace", "demo", "evaluate", "failures", "annotate", "judges"} <= {p for p, _, _ in links}  # every page


def test_home_follows_a_store_changed_by_a_command(app_db, tmp_path):
    """What the store holds follows an ingest made outside the app, without a Refresh."""
    from bfr_core.ingest import ingest
    from bfr_core.ingest.demo import write_demo
    from bfr_core.store import Store

    at = app_test().run()
    assert list(at.dataframe[0].value["dataset"]) == ["demo"]
    s = Store(app_db)
    ingest(s, "jsonl", write_demo(tmp_path / "mine.jsonl"), name="mine", embed=False)
    s.close()
    at.run()
    assert sorted(at.dataframe[0].value["dataset"]) == ["demo", "mine"]
