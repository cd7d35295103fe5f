"""How the judges of some runs behave (``bfr judges RUN...`` and the Judges page), under each answer key.

Covers: :func:`answered_arms` (the systems with answers), :func:`verdict_table` (judge -> (run, question, arm) -> label under a key: the judge's
verdict stored under that key, else its verdict on the original key when it was given the same gold
text; an imported judge is never re-asked, so a question whose gold an overlay changes has no
imported verdict under it and is counted as ``not_judged``) and :func:`judge_report`, per judge and
key:

* accept rate (CORRECT of decided) per system (arm), per question type and per answer-length bucket
  (:func:`length_bucket`, words of the answer), and overall; the undecided rate;
* false-accept rate on the systems named ``known_wrong`` (answers written to be wrong: every
  acceptance is a false one);
* the time a verdict took (:func:`verdict_seconds`: the mean of the verdicts' stored timings and how
  many are timed; an imported verdict has none, a model verdict the call cache replayed counts its
  replay);
* pairwise agreement and Cohen's kappa (``stats.cohen_kappa``) on the answers both judges decided;
* agreement with human answer-correctness labels where they exist: the annotators' majority label on
  each answer (``answer_labels.human_verdicts``) is the :data:`HUMAN` judge, given the original key's
  gold, so under an overlay it stands only where the overlay keeps that gold; per judge the agreement,
  Cohen's kappa and n on the answers both decided, and the same between every two annotators;
* the retrieval figures (Gold Hit, CER) of every arm with evidence, scored against the key's gold
  turns (``overlay.retrieval_under``);
* under an overlay key, the questions left out as unanswerable and the answer ceiling the original
  key allows on the part of the dataset the overlay audited (:func:`ceilings`).

Also :func:`keys_markdown`, the section ``bfr report`` adds where the run's dataset has an overlay:
every arm's Gold Hit / CER under each key and each overlay's answer ceiling.

Does not cover: judging (``evaluation.judging``), the plot (``plots.judge_accept_figure``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from itertools import combinations
from typing import Any

from bfr_core.arm_names import canonical_arm
from bfr_core.evaluation.answer_labels import annotator_verdicts, majorities
from bfr_core.evaluation.overlay import covered_ceiling, golds_under, overlay_names, retrieval_under
from bfr_core.evaluation.stats import cohen_kappa
from bfr_core.roles.answer_judge import UNDECIDED
from bfr_core.runs import load_results, run_row
from bfr_core.store import Store
from bfr_core.verdicts import ORIGINAL, load_verdicts

HUMAN = "human"  # the judge name human answer-correctness labels are stored under
BUCKETS = ((1, 3, "1-3 words"), (4, 10, "4-10 words"), (11, 30, "11-30 words"), (31, 10**9, "31+ words"))

Key = tuple[str, str, str]  # (run, question, arm)


def answered_arms(store: Store, run_ids: Sequence[str]) -> list[str]:
    """The arms of the runs that hold at least one answer, by registered name (``arm_names``), sorted."""
    return sorted({canonical_arm(a) for r in run_ids for (a,) in store.cursor().execute(
        "SELECT DISTINCT arm FROM results WHERE run_id = ? AND answer IS NOT NULL", [r]).fetchall()})


def length_bucket(answer: str) -> str:
    n = len(answer.split())
    return next((name for lo, hi, name in BUCKETS if lo <= n <= hi), "empty")


def verdict_table(store: Store, run_ids: Sequence[str], key: str = ORIGINAL) -> dict[str, dict[Key, str]]:
    """judge -> (run, question, arm) -> CORRECT | WRONG | UNDECIDED under ``key``."""
    out: dict[str, dict[Key, str]] = defaultdict(dict)
    for run_id in run_ids:
        golds = golds_under(store, run_id, key)
        fallback: dict[str, dict[Key, str]] = defaultdict(dict)
        for v in load_verdicts(store, run_id):
            k = (run_id, v["question_id"], v["arm"])
            if v["question_id"] not in golds or v["label"] is None:
                continue
            if v["key"] == key:
                out[v["judge"]][k] = v["label"]
            elif v["key"] == ORIGINAL and v["gold"] == golds[v["question_id"]]:
                fallback[v["judge"]][k] = v["label"]
        for judge, labels in fallback.items():
            for k, label in labels.items():
                out[judge].setdefault(k, label)
        for k, label in majorities(annotator_table(store, [run_id], key)).items():
            out[HUMAN][k] = label
    return dict(out)


def verdict_seconds(store: Store, run_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """judge -> {"timed": verdicts with a stored time, "s_per_verdict": their mean in seconds} over
    every key of ``run_ids`` (a judge whose verdicts carry no time, an imported one, is absent)."""
    ms: dict[str, list[float]] = defaultdict(list)
    for run_id in run_ids:
        for v in load_verdicts(store, run_id):
            if v["label"] is not None and v["elapsed_ms"] is not None:
                ms[v["judge"]].append(float(v["elapsed_ms"]))
    return {j: {"timed": len(x), "s_per_verdict": round(sum(x) / len(x) / 1000, 3)} for j, x in ms.items()}


def annotator_table(store: Store, run_ids: Sequence[str], key: str = ORIGINAL) -> dict[str, dict[Key, str]]:
    """Annotator -> (run, question, arm) -> their verdict, kept under ``key`` only where its gold is the
    original key's (the gold the annotator saw) and the question is not left out."""
    out: dict[str, dict[Key, str]] = defaultdict(dict)
    for run_id in run_ids:
        golds = golds_under(store, run_id, key)
        original = golds if key == ORIGINAL else golds_under(store, run_id, ORIGINAL)
        for annotator, verdicts in annotator_verdicts(store, [run_id]).items():
            for k, label in verdicts.items():
                if k[1] in golds and golds[k[1]] == original.get(k[1]):
                    out[annotator][k] = label
    return dict(out)


def _rates(labels: list[str]) -> dict[str, Any]:
    decided = [x for x in labels if x != UNDECIDED]
    acc = sum(x == "CORRECT" for x in decided)
    return {"n": len(labels), "decided": len(decided),
            "accept_pct": round(100.0 * acc / len(decided), 2) if decided else None,
            "undecided_pct": round(100.0 * (len(labels) - len(decided)) / len(labels), 2) if labels else None}


def _pair(a: dict[Key, str], b: dict[Key, str]) -> dict[str, Any]:
    both = [k for k in a if k in b and a[k] != UNDECIDED and b[k] != UNDECIDED]
    if not both:
        return {"n": 0, "agreement_pct": None, "kappa": None}
    xa, xb = [a[k] for k in both], [b[k] for k in both]
    agree = sum(x == y for x, y in zip(xa, xb, strict=True))
    return {"n": len(both), "agreement_pct": round(100.0 * agree / len(both), 2),
            "kappa": round(cohen_kappa(xa, xb, ("CORRECT", "WRONG")), 3)}


def judge_report(store: Store, run_ids: Sequence[str], keys: Sequence[str] = (ORIGINAL,),
                 known_wrong: Sequence[str] = ()) -> dict[str, Any]:
    """The report as JSON-ready dicts: ``{"keys": {key: {"judges": {...}, "pairs": [...], ...}}}``."""
    rows: dict[Key, dict[str, Any]] = {}
    dataset_of: dict[str, str] = {}
    for run_id in run_ids:
        run = run_row(store, run_id)
        dataset_of[run_id] = run[0]
        qtype = {q.question_id: q.qtype for q in store.questions(run[0])}
        for r in load_results(store, run_id):
            if r["answer"] is not None and r["status"] == "ok":
                rows[(run_id, r["question_id"], r["arm"])] = {"arm": canonical_arm(r["arm"]), "qtype": qtype.get(r["question_id"]),
                                                              "bucket": length_bucket(r["answer"])}
    known_wrong = [canonical_arm(a) for a in known_wrong]
    out: dict[str, Any] = {"runs": list(run_ids), "answers": len(rows), "known_wrong": list(known_wrong), "keys": {}}
    timing = verdict_seconds(store, run_ids)
    for key in keys:
        table = verdict_table(store, run_ids, key)
        golds = {run_id: golds_under(store, run_id, key) for run_id in run_ids}
        judged_rows = {k for k in rows if k[1] in golds[k[0]]}
        section: dict[str, Any] = {"answers": len(judged_rows), "left_out_unanswerable": len(rows) - len(judged_rows),
                                   "judges": {}, "pairs": []}
        for judge, labels in sorted(table.items()):
            mine = {k: v for k, v in labels.items() if k in judged_rows}
            by: dict[str, dict[str, list[str]]] = {"system": defaultdict(list), "qtype": defaultdict(list),
                                                   "length": defaultdict(list)}
            for k, label in mine.items():
                meta = rows[k]
                by["system"][meta["arm"]].append(label)
                by["qtype"][str(meta["qtype"])].append(label)
                by["length"][meta["bucket"]].append(label)
            wrong = [label for k, label in mine.items() if rows[k]["arm"] in known_wrong]
            real = [label for k, label in mine.items() if rows[k]["arm"] not in known_wrong]
            section["judges"][judge] = {
                **_rates(list(mine.values())), "not_judged": len(judged_rows) - len(mine),
                "timed": timing.get(judge, {}).get("timed", 0),
                "s_per_verdict": timing.get(judge, {}).get("s_per_verdict"),
                "real_answers": _rates(real),
                "false_accept_pct": _rates(wrong)["accept_pct"] if wrong else None,
                "by_system": {s: _rates(v) for s, v in sorted(by["system"].items())},
                "by_qtype": {s: _rates(v) for s, v in sorted(by["qtype"].items())},
                "by_length": {name: _rates(by["length"][name]) for *_, name in BUCKETS if by["length"].get(name)},
            }
        names = sorted(table)
        for a, b in combinations(names, 2):
            section["pairs"].append({"a": a, "b": b, **_pair(table[a], table[b])})
        if HUMAN in table:
            section["human"] = {j: _pair(table[j], table[HUMAN]) for j in names if j != HUMAN}
            section["human_labelled_answers"] = sum(k in judged_rows for k in table[HUMAN])
            people = annotator_table(store, run_ids, key)
            section["human_annotators"] = {
                "annotators": len(people),
                "pairs": [{"a": a, "b": b, **_pair(people[a], people[b])} for a, b in combinations(sorted(people), 2)]}
        retrieval = {run_id: retrieval_under(store, run_id, key) for run_id in run_ids}
        section["retrieval"] = {run_id: arms for run_id, arms in retrieval.items() if arms}
        if key != ORIGINAL:
            section["ceiling_under_original_key"] = ceilings(store, run_ids, key)
        out["keys"][key] = section
    return out


def ceilings(store: Store, run_ids: Sequence[str], key: str) -> dict[str, Any]:
    """Dataset -> the answer ceiling the original key allows per overlay ``key``
    (``overlay.covered_ceiling``) over the runs' questions in the part of the dataset it audited."""
    asked: dict[str, set[str]] = defaultdict(set)
    for run_id in run_ids:
        asked[run_row(store, run_id)[0]].update(r["question_id"] for r in load_results(store, run_id))
    return {ds: covered_ceiling(store, ds, key, sorted(qids)) for ds, qids in sorted(asked.items())
            if key in overlay_names(store, ds)}


def keys_markdown(store: Store, run_id: str, k: int | None = None, *, own_budgets: bool = False) -> str:
    """``bfr report``'s section on the answer keys: each arm's Gold Hit / CER under the original key
    and under every overlay of the run's dataset, at the report's set size (``overlay.retrieval_under``),
    and each overlay's answer ceiling; "" without an overlay."""
    dataset_id = run_row(store, run_id)[0]
    names = overlay_names(store, dataset_id)
    if not names:
        return ""
    keys = [ORIGINAL, *names]
    per = {key: retrieval_under(store, run_id, key, k, own_budgets=own_budgets) for key in keys}
    arms = sorted({arm for figures in per.values() for arm in figures}, key=canonical_arm)
    cut = next((f["k"] for figures in per.values() for f in figures.values()), None)
    size = (f"every set cut to its first {cut} ids" if cut is not None
            else "each arm's whole set: NOT AT EQUAL BUDGET" if own_budgets
            else "each arm's whole set; every arm's largest set has the same size")
    lines = ["", "## Under each answer key", ""]
    if arms:
        lines += [f"Gold Hit / CER (%) of each arm's evidence ({size}) against the "
                  "dataset's gold turns (original) and each overlay's corrected evidence; n = questions scored "
                  "(an overlay's unanswerable ones left out).", "",
                  "| arm | " + " | ".join(f"{k} Gold Hit | {k} CER | {k} n" for k in keys) + " |",
                  "|---|" + "---:|" * (3 * len(keys))]
        for arm in arms:
            cells = []
            for key in keys:
                f = per[key].get(arm, {})
                cells += [_pct(f.get("gold_hit")), _pct(f.get("cer")), str(f.get("n", ""))]
            lines.append(f"| {canonical_arm(arm)} | " + " | ".join(cells) + " |")
        lines.append("")
    for name in names:
        c = ceilings(store, [run_id], name)[dataset_id]
        lines.append(f"Answer ceiling under the original key per overlay `{name}`: {_pct(c['ceiling_pct'])} % of "
                     f"{c['questions']} questions (the run's questions in {', '.join(c['scopes'])}, the part it "
                     f"audited; {c['outside_questions']} outside), {c['answer_key_wrong']} keys wrong of which "
                     f"{c['unanswerable']} unanswerable.")
    return "\n".join(lines) + "\n"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"
