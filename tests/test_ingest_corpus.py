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
from bfr_core.ingest.corpus import LABELS, blind_id, corpus_lines  # noqa: E402
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


def test_blind_leaves_out_every_label_and_every_id_that_could_carry_one(lme: Store) -> None:
    lines = [json.loads(x) for x in corpus_lines(lme, "lme", blind=True)]
    text = "".join(corpus_lines(lme, "lme", blind=True))
    for rec in lines:
        for q in rec["questions"]:
            assert set(q) == {"question_id", "question", "date"} and not set(q) & set(LABELS)
        assert all("local_id" not in t for s in rec["sessions"] for t in s["turns"])
    # LongMemEval's ids say where the gold is ("answer_...") and which question abstains ("..._abs")
    ids = [x for r in lines for x in (r["scope_id"], *(q["question_id"] for q in r["questions"]), *(
        y for s in r["sessions"] for y in (s["session_id"], *(t["turn_id"] for t in s["turns"]))))]
    assert len(ids) == 16 and not [x for x in ids if "answer_" in x or "_abs" in x or "sharegpt" in x]
    assert "answer_" not in text
    q2 = lines[1]
    assert q2["scope_id"] == blind_id("lme", "scope", "q2_abs") and q2["questions"][0]["question_id"] == blind_id(
        "lme", "question", "q2_abs")
    assert [s["session_id"] for s in q2["sessions"]] == [blind_id("lme", "session", s) for s in ("answer_b_1", "sharegpt_x_0")]
    assert blind_id("lme", "turn", "x") != blind_id("other", "turn", "x") != blind_id("lme", "session", "x")


def test_a_run_over_the_blind_ids_imports_as_the_dataset_s(lme: Store, tmp_path: Path) -> None:
    from bfr_core.evaluation.imported import import_run
    from bfr_core.evaluation.summary import summarize

    lines = [json.loads(x) for x in corpus_lines(lme, "lme", blind=True)]
    run = tmp_path / "run.jsonl"
    run.write_text("".join(json.dumps({"question_id": q["question_id"], "ranking": [  # the last turn first
        t["turn_id"] for s in r["sessions"] for t in s["turns"]][::-1]}) + "\n" for r in lines for q in r["questions"]),
        encoding="utf-8")
    rep = import_run(lme, run, dataset_id="lme", name="theirs", k=2)
    assert rep.questions == 2 and rep.missing == 0
    arm = summarize(lme, rep.run_id)["arms"]["theirs"]
    assert arm["mean_set_size"] == 2.0 and arm["turn_hit"] == 50.0  # q1's gold is its next-to-last turn


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


def test_a_session_without_turns_keeps_its_stored_date() -> None:
    from datetime import datetime

    from bfr_core.ingest.corpus import scope_record
    from bfr_core.records import Scope, Turn

    scope = Scope("d", "c1", ("s1", "s2"), ("A",))
    turns = (Turn("t1", "s1", 0, "A", "hi", datetime(2023, 5, 1)),)
    rec = scope_record(scope, turns, [], stored_dates={"s2": datetime(2023, 5, 20, 9, 0)})
    assert [(s["session_id"], s["date"], len(s["turns"])) for s in rec["sessions"]] == [
        ("s1", "2023-05-01T00:00", 1), ("s2", "2023-05-20T09:00", 0)]


def test_a_session_ranking_in_blind_ids_scores_as_in_the_real_ones(lme: Store, tmp_path: Path) -> None:
    from bfr_core.evaluation.imported import import_run, official_rows

    lines = [json.loads(x) for x in corpus_lines(lme, "lme", blind=True)]
    real = [json.loads(x) for x in corpus_lines(lme, "lme")]
    got = {}
    for name, recs in (("blind", lines), ("real", real)):
        run = tmp_path / f"{name}.jsonl"
        run.write_text("".join(json.dumps({"question_id": q["question_id"], "ranking": [
            s["session_id"] for s in r["sessions"]][::-1]}) + "\n" for r in recs for q in r["questions"]),
            encoding="utf-8")
        rep = import_run(lme, run, dataset_id="lme", name=name)
        got[name] = [{k: v for k, v in row.items() if k != "arm"} for row in official_rows(lme, rep.run_id, name)]
    assert got["blind"] == got["real"] and got["real"]
