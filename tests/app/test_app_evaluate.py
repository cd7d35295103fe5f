"""Evaluate page: the shown `bfr eval` line is what runs, in the background, with the CLI's own
progress; when it ends the run is in the store and the page says so (issue 29, "Evaluate from the app")."""

import time

from conftest import app_test, texts

from bfr_core.runs import list_runs
from bfr_core.store import Store
from ui import evaluating as E


def _page():
    at = app_test().run()
    at.switch_page("pages/evaluate.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_the_command_follows_the_choices(app_db):
    at = _page()
    at.multiselect(key="eval_arms").set_value(["mem0"]).run()
    at.number_input(key="eval_sample").set_value(0).run()
    assert at.code[0].value == f".venv/bin/bfr eval --db {app_db} --dataset demo --arms mem0"
    at.number_input(key="eval_sample").set_value(20).run()
    assert at.code[0].value.endswith("--arms mem0 --sample 20")


def test_run_in_the_background_then_results(app_db):
    at = _page()
    at.multiselect(key="eval_arms").set_value(["mem0"]).run()
    at.number_input(key="eval_sample").set_value(0).run()
    before = len(list_runs(Store(app_db, read_only=True)))
    at.button(key="eval_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    job = E.JOBS[str(app_db)]
    assert job.command == at.code[0].value
    deadline = time.monotonic() + 600
    while job.running and time.monotonic() < deadline:
        time.sleep(1)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert "Finished" in texts(at), (texts(at), job.err.read_text()[-2000:])
    runs = list_runs(Store(app_db, read_only=True))
    assert len(runs) == before + 1
    assert f"run `{runs[0]['run_id']}`" in texts(at)  # the run id, copyable (not escaped in its code span)
    figures = at.table[0].value
    assert list(figures.index) == ["mem0"] and "Gold Hit" in figures.columns and "set size" in figures.columns


def test_progress_is_the_clis_last_line_and_cancel_is_said(tmp_path):
    import subprocess
    import sys

    err = tmp_path / "err"
    err.write_text("loading\neval demo:  10%|█ | 1/10 [00:01<00:09]\reval demo:  20%|██ | 2/10 [00:02<00:08]\r",
                   encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    job = E.Job("x", proc, tmp_path / "out", err)
    assert job.running and job.progress().startswith("eval demo:  20%")
    job.cancel(wait_s=5)
    assert not job.running
    ok, message = job.outcome()
    assert not ok and message.startswith("cancelled")


def test_a_dataset_with_nothing_to_score_cannot_be_run(app_db, tmp_path):
    """No question with gold turns: `bfr eval` refuses it, so the page says why and Run stays off; the
    other pages offer no command for it."""
    import json

    from bfr_core.ingest import ingest

    src = tmp_path / "nogold.jsonl"
    src.write_text("\n".join(json.dumps(r) for r in (
        {"type": "session", "session_id": "s", "turns": [{"speaker": "a", "text": "we saw a fox"}]},
        {"type": "question", "question_id": "n1", "question": "what did we see?", "answer": "a fox",
         "scope": "default", "gold": []})) + "\n", encoding="utf-8")
    store = Store(app_db)
    ingest(store, "jsonl", src, name="nogold", embed=False)
    store.close()
    at = _page()
    at.selectbox(key="eval_dataset").select("nogold").run()
    assert "No question of `nogold` has gold turns" in texts(at) and at.button(key="eval_run").disabled
    at.selectbox(key="eval_dataset").select("demo").run()
    assert not at.button(key="eval_run").disabled
    at.switch_page("pages/home.py").run()  # Home's first command is for a dataset a run can score
    assert "--dataset nogold" not in texts(at)


class _Elsewhere:
    """A loopback listener standing in for every other host: the proxy the environment names, so a
    request meant for any host but 127.0.0.1 is a connection here (counted, then closed)."""

    def __init__(self) -> None:
        import socket
        import threading

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            conn.close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"


def test_a_model_run_goes_to_the_configured_server(app_db, tmp_path, monkeypatch):
    """bfr.toml names an OpenAI-compatible server by base_url: the Evaluate command spells it, and the
    run's calls reach that server, none any other host."""
    from llm_wire_server import WireServer, role_reply

    server, elsewhere = WireServer(reply=role_reply, max_requests=2000, lifetime_s=600).start(), _Elsewhere()
    try:
        cfg = tmp_path / "bfr.toml"
        cfg.write_text(f'[llm]\nprovider = "openai"\nmodel = "wire"\nbase_url = "{server.openai_url}"\n'
                       "max_retries = 0\ntimeout_s = 20\n", encoding="utf-8")
        monkeypatch.setenv("BFR_CONFIG", str(cfg))
        monkeypatch.setenv("OPENAI_API_KEY", "sk-planted-0000000000000000")
        monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
            monkeypatch.setenv(name, elsewhere.url)
        monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
        monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
        at = _page()
        at.selectbox(key="eval_provider").select("openai:wire").run()
        at.multiselect(key="eval_arms").set_value(["bfr-mv"]).run()
        at.number_input(key="eval_sample").set_value(2).run()
        cmd = at.code[0].value
        assert f"--provider openai --model wire --base-url {server.openai_url} --config {cfg}" in cmd
        at.button(key="eval_run").click().run()
        job = E.JOBS[str(app_db)]
        assert job.command == cmd
        deadline = time.monotonic() + 600
        while job.running and time.monotonic() < deadline:
            time.sleep(1)
        assert job.proc.returncode == 0, job.err.read_text()[-2000:]
        assert len(server.seen) > 0 and elsewhere.connections == 0, (len(server.seen), elsewhere.connections, job.err.read_text()[-1500:])
    finally:
        server.stop()
        elsewhere.sock.close()


def test_an_ended_jobs_folder_is_removed_when_the_next_starts(tmp_path):
    import subprocess
    import sys

    folder = tmp_path / "bfr-app-eval-x"
    folder.mkdir()
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    old = E.Job("x", proc, folder / "stdout.json", folder / "stderr.txt")
    E.JOBS["store-key-for-this-test"] = old
    try:
        new = E.start("store-key-for-this-test", ".venv/bin/bfr --help")
        new.proc.wait(60)
        assert not folder.exists() and new.out.parent.exists()
        E.discard(new)
        assert not new.out.parent.exists()
    finally:
        E.JOBS.pop("store-key-for-this-test", None)


def test_finished_figures_compare_the_arms_at_a_common_set_size(app_db, tmp_path):
    """A run whose arms' sets differ in size (mem0 10 turns, bfr-mv more): the figures shown when it
    ends are those of every set cut to 10 turns, never the arms' own sizes side by side."""
    import json
    import subprocess
    import sys

    from conftest import RUN_ID

    own = {"mem0": {"n": 6, "mean_set_size": 10.0, "gold_hit": 50.0, "failed": 0},
           "bfr-mv": {"n": 6, "mean_set_size": 31.0, "gold_hit": 100.0, "failed": 0}}  # as `bfr eval` prints them
    out, err = tmp_path / "stdout.json", tmp_path / "stderr.txt"
    out.write_text(json.dumps({"run_id": RUN_ID, "dataset_id": "demo", "n_questions": 6, "arms": own}))
    err.write_text("")
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    E.JOBS[str(app_db)] = E.Job("bfr eval", proc, out, err)
    try:
        at = _page()
        at.run()  # the first run after the end re-reads the store and reruns
        assert not at.exception, [e.value for e in at.exception]
        assert f"run `{RUN_ID}`" in texts(at)
        figures = at.table[0].value
        assert list(figures.index) == ["mem0", "bfr-mv"]
        assert set(figures["set size"].astype(float)) == {10.0}, figures  # bfr-mv's sets cut to mem0's 10
        from bfr_core.evaluation.summary import run_rows, set_sizes

        largest = set_sizes(run_rows(Store(app_db, read_only=True), RUN_ID))
        assert largest["bfr-mv"] > largest["mem0"] == 10  # the stored sets do differ in size
        assert "Compared at **10 turns each**" in texts(at) and f"bfr-mv {largest['bfr-mv']}" in texts(at)
        assert all("[" in v for v in figures["Gold Hit"])  # with its interval
        # the Trace link names a question of the run, so Trace shows that run's stored trace of it
        link = next(p.proto for p in at.get("page_link") if p.proto.label.startswith("Trace a question"))
        assert f"run={RUN_ID}" in link.query_string and "question=q1" in link.query_string
        trace = app_test()
        trace.query_params.update(dict(pair.split("=") for pair in link.query_string.split("&")))
        trace.run()
        trace.switch_page("pages/trace.py").run()
        trace.button(key="trace_all").click().run()
        assert not trace.exception and f"Stored trace from eval run `{RUN_ID}`" in texts(trace)
    finally:
        E.JOBS.pop(str(app_db), None)
