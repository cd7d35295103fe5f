"""Team mode roles (``ui.access``): the matrix over (annotator, lead, model user, barred user) x
(export every annotator's labels, see a running job's command, cancel it).

* An annotator exports only their own labels; every annotator's labels (with the runs and arms behind
  the items) go only to a lead (``[bfr] leads``), and only once the lead's own queue is done.
* An Evaluate job belongs to whoever started it: only they and the leads see its command and Cancel;
  anyone else sees that the store is busy.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import app_test, texts

from bfr_core import config as CF
from bfr_core.evaluation import labels as L
from bfr_core.store import Store
from ui import evaluating as E

AUTH = {"redirect_uri": "http://localhost:8501/oauth2callback", "cookie_secret": "test-cookie-secret",
        "client_id": "cid", "client_secret": "csecret",
        "server_metadata_url": "https://id.example.org/.well-known/openid-configuration"}
ANNOTATOR, LEAD, MODEL_USER, BARRED = "ann@example.org", "lead@example.org", "mu@example.org", "barred@example.org"
MARK = "--sample 7 --arms mem0"  # in the job's command: visible only to who may see the job


@pytest.fixture()
def team_db(app_db, tmp_path, monkeypatch):
    cfg = tmp_path / "bfr.toml"
    cfg.write_text('[llm]\nprovider = "anthropic"\nmodel = "claude-test"\n', encoding="utf-8")
    monkeypatch.setenv("BFR_CONFIG", str(cfg))
    monkeypatch.delenv(CF.TEAM_ENV, raising=False)
    s = Store(app_db)
    items = [i for i in (L.sync_queue(s) and L.items(s))]
    L.save_label(s, items[0], ANNOTATOR, "sufficient", "mine")
    L.save_label(s, items[0], MODEL_USER, "insufficient", "model user's note")
    s.con.execute("CHECKPOINT")
    s.close()
    yield app_db, items
    for job in list(E.JOBS.values()):
        if job.running:
            job.proc.kill()
    E.JOBS.clear()


def _as(who: str):
    at = app_test()
    at.secrets["auth"] = AUTH
    at.secrets["bfr"] = {"model_users": [MODEL_USER, LEAD], "leads": [LEAD]}
    at.user = {"is_logged_in": True, "email": who, "email_verified": True}
    return at


def _job(db, owner: str = MODEL_USER) -> E.Job:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    job = E.Job(f".venv/bin/bfr eval --db {db} --dataset demo {MARK}", proc, db.with_name("o.json"),
                db.with_name("e.txt"), owner)
    E.JOBS[str(db)] = job
    return job


def _downloads(at) -> list[str]:
    return [el.proto.label for el in at.get("download_button")]


EXPECTED = {  # user: (exports everyone's labels, sees the job, may cancel it)
    ANNOTATOR: (False, False, False),
    LEAD: (True, True, True),  # its own queue done first (below)
    MODEL_USER: (False, True, True),  # the job's owner
    BARRED: (False, False, False),
}


@pytest.mark.parametrize("who", list(EXPECTED))
def test_team_roles_matrix(team_db, who):
    db, items = team_db
    exports_all, sees, cancels = EXPECTED[who]
    if who == LEAD:
        s = Store(db)
        for i in items:
            L.save_label(s, i, LEAD, "sufficient")
        s.close()
    at = _as(who).run()
    assert not at.exception, [e.value for e in at.exception]
    at.switch_page("pages/annotate.py").run()
    assert not at.exception, [e.value for e in at.exception]
    got = _downloads(at)
    assert "My labels (CSV)" in got
    assert ("Every annotator's labels (CSV)" in got) is exports_all, got

    job = _job(db)
    at.switch_page("pages/evaluate.py").run()
    assert not at.exception, [e.value for e in at.exception]
    body = texts(at)
    assert (MARK in body) is sees, body
    assert ("Another user's evaluation of this store is running" in body) is (not sees)
    assert at.button(key="eval_run").disabled  # the store is busy for everyone
    cancel = [b for b in at.button if b.key == "eval_cancel"]
    assert bool(cancel) is cancels
    if cancel:
        cancel[0].click().run()
        assert not job.running and job.cancelled
    else:
        assert job.running


def test_a_lead_gets_no_full_export_before_their_own_labelling_is_done(team_db):
    db, items = team_db
    s = Store(db)
    for i in items[:-1]:
        L.save_label(s, i, LEAD, "sufficient")
    s.close()
    at = _as(LEAD).run()
    at.switch_page("pages/annotate.py").run()
    assert "Every annotator's labels (CSV)" not in _downloads(at)
    s = Store(db)
    L.save_label(s, items[-1], LEAD, "uncertain")
    s.close()
    at.run()
    assert "Every annotator's labels (CSV)" in _downloads(at)


def test_own_export_holds_no_other_annotator_and_no_arm(team_db):
    db, items = team_db
    s = Store(db, read_only=True)
    mine = L.export_rows(s, ANNOTATOR, judges=lambda i: {"judge A": "sufficient"})
    everyone = L.export_rows(s)
    s.close()
    assert {r["annotator"] for r in mine} == {ANNOTATOR} and {r["annotator"] for r in everyone} >= {ANNOTATOR, MODEL_USER}
    assert all(r["sources"] == [] for r in mine) and all(r["sources"] for r in everyone)
    assert mine[0]["judges"] == {"judge A": "sufficient"}  # the judges' labels beside the annotator's
    assert "model user's note" not in L.to_csv(mine) + L.to_jsonl(mine)


def test_label_export_cli_for_one_annotator(team_db, tmp_path):
    import json

    from bfr_core.cli import main

    db, _ = team_db
    out = tmp_path / "mine.jsonl"
    assert main(["label-export", "--db", str(db), "--out", str(out), "--annotator", ANNOTATOR]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert rows and {r["annotator"] for r in rows} == {ANNOTATOR} and all(r["sources"] == [] for r in rows)
    assert all("judges" in r for r in rows)
    assert main(["label-export", "--db", str(db), "--out", str(tmp_path / "x.csv"), "--annotator", " "]) == 2
