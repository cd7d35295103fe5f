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
