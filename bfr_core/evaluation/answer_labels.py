"""The answer-correctness annotation task: its queue, blinded items, the judges' verdicts on an item,
and the human verdicts the judges report compares every judge with.

Covers
------
* The queue (:func:`sync_queue`): every (question, answer) of finished runs' ok rows with a non-empty
  answer (imported systems' answers and ``bfr eval --answer`` runs alike), deduplicated by a hash of
  (dataset, question, answer text), so an answer two systems both gave is labelled once. Which runs and
  arms gave it is kept apart (``answer_sources``) and never rendered to annotators. The queue order is
  a seeded hash of the item id (``labels.ANSWER``), so it says nothing about the system.
* Blinded rendering (:func:`blinded_item`): the question, its date, the dataset's original answer key
  and the turns that key cites as evidence, and the answer. Never the system, run, arm, the system's own
  retrieved turns (their number and choice tell systems apart) or any judge's verdict.
* The judges' verdicts on an item (:func:`judge_verdicts`): every judge's stored verdict under the
  original key (``bfr judge``, imported verdicts) and the run's own answer judge, for a page to reveal
  after the annotator's label, and for the export.
* Human verdicts (:func:`human_verdicts`): per (run, question, arm), the majority of the annotators'
  current labels on its item, as CORRECT / WRONG / UNDECIDED, with the gold text they saw.

Saving, the journal (side file and flush), history and export are the shared label machinery
(``evaluation.labels`` with ``task=labels.ANSWER``). Does not cover: the figures (``evaluation.judge_report``),
the UI (``pages/annotate.py``, ``ui/answer_task.py``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from bfr_core.duck import fetch_if_tables
from bfr_core.evaluation.labels import EvidenceLine, LabelError, ensure_schema, fmt_date
from bfr_core.roles.answer_judge import UNDECIDED
from bfr_core.runs import run_versions
from bfr_core.store import Store
from bfr_core.verdicts import ORIGINAL

ITEM_PREFIX = "ans-"  # answer item ids; sufficiency item ids are bare hashes, so the two never meet
EVAL_JUDGE = "eval judge"  # the name of the run's own answer judge (``results.judge``) beside stored verdicts
HUMAN_VERDICT = {"correct": "CORRECT", "wrong": "WRONG", "undecided": UNDECIDED}

# One item per (dataset, question, answer text) among finished, current runs' ok rows with an answer
Q_SNAPSHOTS = f"""
SELECT '{ITEM_PREFIX}' || md5(ru.dataset_id || chr(0) || res.question_id || chr(0) || trim(res.answer)) AS item_id,
       ru.dataset_id, res.question_id, trim(res.answer) AS answer, res.run_id, res.arm
FROM results res JOIN runs ru ON ru.run_id = res.run_id JOIN ({{versions}}) v ON v.run_id = res.run_id
WHERE ru.finished IS NOT NULL AND res.status = 'ok' AND res.answer IS NOT NULL AND trim(res.answer) <> ''
      AND v.current
"""


@dataclass(frozen=True, slots=True)
class AnswerItem:
    item_id: str
    question: str
    question_date: str
    gold: str  # the dataset's original answer key
    answer: str
    evidence: tuple[EvidenceLine, ...]  # the turns the key cites, in time order

    def as_text(self) -> str:
        """The item as an annotator (or a blinded judge) reads it."""
        lines = [f"Question: {self.question}"]
        if self.question_date:
            lines.append(f"Asked on: {self.question_date}")
        lines.append(f"Gold answer: {self.gold}")
        if self.evidence:
            lines.append("Evidence the answer key cites:")
            lines += [f"[{e.n}] {e.date} {e.speaker}: {e.text}".replace("  ", " ") for e in self.evidence]
        lines.append(f"Answer to judge: {self.answer}")
        return "\n".join(lines)


def is_answer_item(item_id: str) -> bool:
    return item_id.startswith(ITEM_PREFIX)


def sync_queue(store: Store) -> int:
    """Add new answers of finished runs to the queue (``answer_items``) and their sources
    (``answer_sources``), in two set-based statements; returns the number of items. A read-only view
    shows the queue as it stands (none if never built)."""
    ensure_schema(store)
    if store.read_only:
        return (fetch_if_tables(store.cursor(), "SELECT count(*) FROM answer_items", one=True) or (0,))[0]
    snapshots = Q_SNAPSHOTS.replace("{versions}", run_versions(store))
    with store.transaction() as cur:
        cur.execute(f"""
INSERT INTO answer_items (item_id, dataset_id, question_id, answer)
SELECT item_id, any_value(dataset_id), any_value(question_id), any_value(answer)
FROM ({snapshots}) s WHERE NOT EXISTS (SELECT 1 FROM answer_items i WHERE i.item_id = s.item_id)
GROUP BY item_id""")
        cur.execute(f"""
INSERT INTO answer_sources (item_id, run_id, arm)
SELECT DISTINCT item_id, run_id, arm
FROM ({snapshots}) s WHERE NOT EXISTS (SELECT 1 FROM answer_sources x
    WHERE x.item_id = s.item_id AND x.run_id = s.run_id AND x.arm = s.arm)""")
    return store.cursor().execute("SELECT count(*) FROM answer_items").fetchone()[0]


def queue_stamp(store: Store) -> tuple[int, str, int, int]:
    """What the answer queue and the verdicts on it depend on, read cheaply: (runs, the newest finish
    time, rows with an answer, verdicts). A page keys its cached queue on it, so answers imported (into
    a new run or an existing one) or judged meanwhile by another process show without a Refresh."""
    ensure_schema(store)
    cur = store.cursor()
    runs, newest = fetch_if_tables(cur, "SELECT count(*), coalesce(max(finished)::VARCHAR, '') FROM runs",
                                   one=True) or (0, "")
    answered = (fetch_if_tables(cur, "SELECT count(*) FROM results WHERE answer IS NOT NULL", one=True) or (0,))[0]
    judged = (fetch_if_tables(cur, "SELECT count(*) FROM verdicts", one=True) or (0,))[0]
    return int(runs), str(newest), int(answered), int(judged)


def blinded_item(store: Store, item_id: str) -> AnswerItem:
    """The item as an annotator sees it: question, original answer key and its cited turns, the answer."""
    ensure_schema(store)
    row = store.cursor().execute(
        "SELECT dataset_id, question_id, answer FROM answer_items WHERE item_id = ?", [item_id]).fetchone()
    if row is None:
        raise LabelError(f"no answer label item '{item_id}' in {store.path}")
    dataset_id, question_id, answer = row
    q = store.question(dataset_id, question_id)
    turns = store.turns_by_id(dataset_id, sorted(set(q.gold)), q.scope_id) if q.gold else {}
    order = sorted(turns.values(), key=lambda t: (t.date or datetime.min, t.session_id, t.idx))
    lines = tuple(EvidenceLine(i + 1, fmt_date(t.date), t.speaker, t.text) for i, t in enumerate(order))
    return AnswerItem(item_id, q.text, fmt_date(q.date), q.answer, answer, lines)


def judge_verdicts(store: Store, item_id: str) -> dict[str, str]:
    """Judge -> verdict on the item's answer under the original key: every stored verdict of its
    sources, and the runs' own answer judge as :data:`EVAL_JUDGE`. A judge that gave the same answer
    different verdicts in different runs shows them joined (``CORRECT|WRONG``)."""
    ensure_schema(store)
    cur = store.cursor()
    found: dict[str, set[str]] = {}
    queries = (
        "SELECT v.judge, v.label FROM answer_sources s JOIN answer_items i USING (item_id) JOIN verdicts v "
        "ON v.run_id = s.run_id AND v.question_id = i.question_id AND v.arm = s.arm "
        f"WHERE s.item_id = ? AND v.key = '{ORIGINAL}' AND v.label IS NOT NULL",
        f"SELECT '{EVAL_JUDGE}', r.judge FROM answer_sources s JOIN answer_items i USING (item_id) JOIN results r "
        "ON r.run_id = s.run_id AND r.question_id = i.question_id AND r.arm = s.arm "
        "WHERE s.item_id = ? AND r.judge IS NOT NULL",
    )
    for sql in queries:
        for judge, label in fetch_if_tables(cur, sql, [item_id]) or ():  # no verdicts table: no judge ran
            found.setdefault(judge, set()).add(label)
    return {j: "|".join(sorted(labs)) for j, labs in sorted(found.items())}


def majority(verdicts: Mapping[str, str]) -> str:
    """CORRECT / WRONG / UNDECIDED: the most frequent of the annotators' verdicts on one answer; a tie
    is UNDECIDED."""
    counts = Counter(verdicts.values()).most_common()
    if not counts or (len(counts) > 1 and counts[0][1] == counts[1][1]):
        return UNDECIDED
    return counts[0][0]


def annotator_verdicts(store: Store, run_ids: list[str] | tuple[str, ...]) -> dict[str, dict[tuple[str, str, str], str]]:
    """Annotator -> (run, question, arm) -> their current label on that answer's item as CORRECT / WRONG /
    UNDECIDED, for the answers of the runs. The annotators judged against the original key."""
    ensure_schema(store)
    rows = fetch_if_tables(
        store.cursor(),
        "SELECT s.run_id, i.question_id, s.arm, c.annotator, c.label FROM current_answer_labels c "
        "JOIN answer_items i USING (item_id) JOIN answer_sources s USING (item_id) "
        "WHERE s.run_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY 1, 2, 3, 4", [list(run_ids)]) or []
    out: dict[str, dict[tuple[str, str, str], str]] = {}
    for run_id, qid, arm, annotator, label in rows:
        out.setdefault(annotator, {})[(run_id, qid, arm)] = HUMAN_VERDICT[label]
    return out


def human_verdicts(store: Store, run_ids: list[str] | tuple[str, ...]) -> dict[tuple[str, str, str], str]:
    """(run, question, arm) -> the annotators' majority verdict on that answer (:func:`majority`), for
    every answer of the runs that has at least one current label."""
    return majorities(annotator_verdicts(store, run_ids))


def majorities(by_annotator: Mapping[str, Mapping[tuple[str, str, str], str]]) -> dict[tuple[str, str, str], str]:
    """Answer -> :func:`majority` of the verdicts the annotators gave it."""
    by: dict[tuple[str, str, str], dict[str, str]] = {}
    for annotator, verdicts in by_annotator.items():
        for k, verdict in verdicts.items():
            by.setdefault(k, {})[annotator] = verdict
    return {k: majority(v) for k, v in sorted(by.items())}
