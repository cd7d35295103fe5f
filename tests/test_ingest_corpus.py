"""What each question searches, exported (bfr_core.ingest.corpus and ``bfr export-data``): hand-made stores."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_ingest_longmemeval import _data, _write  # noqa: E402

from bfr_core.cli import main  # noqa: E402
from bfr_core.ingest import ingest  # noqa: E402
from bfr_core.ingest.corpus import LABELS, corpus_lines  # noqa: E402
from bfr_core.store import Store  # noqa: E402

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "byo"  # hand-made, no benchmark data


@pytest.fixture
def lme(tmp_path: Path) -> Store:
    store = Store(tmp_path / "s.duckdb")
    ingest(store, "longmemeval", _write(tmp_path, _data()), name="lme", embed=False)
    return store


def test_each_scope_is_what_its_questions_search_dated_as_that_scope_dates_it(lme: Store) -> None:
    q1, q2 = (json.loads(line) for line in corpus_lines(lme, "lme"))
    assert (q1["scope_id"], q2["scope_id"]) == ("q1", "q2_abs")
    # the shared session carries each haystack's own date, in each haystack's order
    assert [(s["session_id"], s["date"]) for s in q1["sessions"]] == [
        ("sharegpt_x_0", "2023-05-20T02:21"), ("answer_a_1", "2023-05-21T10:00")]
    assert [(s["session_id"], s["date"]) for s in q2["sessions"]] == [
        ("answer_b_1", "2023-05-22T09:00"), ("sharegpt_x_0", "2023-05-25T08:00")]
    assert q1["sessions"][1]["turns"][0] == {"turn_id": "answer_a_1_1", "speaker": "user", "text": "I bought a kite"}
    (question,) = q1["questions"]
    assert question["gold"] == ["answer_a_1_1"] and question["answer"] == "yes" and question["date"].startswith("2023-05-30")
    assert q2["questions"][0]["is_abstention"] is True
    # every turn id is the store's: a run naming them imports as is
    stored = {t.turn_id for s in ("q1", "q2_abs") for t in lme.scope_turns("lme", s)}
    assert {t["turn_id"] for r in (q1, q2) for s in r["sessions"] for t in s["turns"]} == stored


def test_blind_leaves_out_every_label(lme: Store) -> None:
    for line in corpus_lines(lme, "lme", blind=True):
        rec = json.loads(line)
        for q in rec["questions"]:
            assert set(q) == {"question_id", "question", "date"} and not set(q) & set(LABELS)
        assert all("local_id" not in t for s in rec["sessions"] for t in s["turns"])


def test_a_locomo_plus_corpus_names_the_stitched_cue(tmp_path: Path) -> None:
    store = Store(tmp_path / "p.duckdb")
    options = {"locomo": str(FIXTURES / "locomo_mini.json"), "stitch": "embedded"}
    ingest(store, "locomo-plus", FIXTURES / "locomo_plus_mini.json", name="plus", embed=False, options=options)
    progress: list[tuple[int, int]] = []
    lines = list(corpus_lines(store, "plus", progress=lambda d, t, _: progress.append((d, t))))
    assert len(lines) == len(store.scopes("plus")) and progress[-1] == (len(lines), len(lines))
    for line, q in zip(lines, store.questions("plus"), strict=True):
        rec = json.loads(line)
        turns = {t["turn_id"]: t for s in rec["sessions"] for t in s["turns"]}
        assert set(q.gold) <= set(turns) and all(turns[g]["local_id"].startswith("cue:") for g in q.gold)


def test_cli_writes_the_file_and_refuses_bad_input(lme: Store, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(lme.path)
    lme.close()
    out = tmp_path / "corpus.jsonl"
    assert main(["export-data", "lme", "--db", db, "--out", str(out), "--quiet"]) == 0
    assert "wrote 2 scopes (2 questions) of 'lme'" in capsys.readouterr().err
    assert [json.loads(x)["scope_id"] for x in out.read_text(encoding="utf-8").splitlines()] == ["q1", "q2_abs"]
    assert main(["export-data", "lme", "--db", db, "--out", str(out), "--quiet"]) == 2  # never over a file unasked
    assert "exists" in capsys.readouterr().err
    assert main(["export-data", "lme", "--db", db, "--out", str(out), "--quiet", "--force", "--blind"]) == 0
    assert '"gold"' not in out.read_text(encoding="utf-8")
    assert main(["export-data", "nope", "--db", db, "--out", str(tmp_path / "x.jsonl"), "--quiet"]) == 2
    assert "no dataset 'nope'" in capsys.readouterr().err and not (tmp_path / "x.jsonl").exists()
    assert main(["export-data", "lme", "--db", db, "--out", db, "--quiet", "--force"]) == 2  # never the store
    assert Store(db, read_only=True).dataset("lme") is not None
