"""The anatomy of all-gold misses: for one question's ranked evidence, its gold turns and where each turn sits
(session, position in the session), which gold turns the first k turns hold and, when the set is relevant but
insufficient (some gold turn among the first k, not every one), where each missing gold turn lies: its rank
band in the arm's head (k+1..20, 21..head, absent), its session against the found gold turns' sessions and its
distance from a found gold turn; the first k turns' concentration on the found gold's sessions; and two oracle
swaps that read gold (upper bounds of re-selection, not methods). :func:`anatomy` does one question,
:func:`summarize` pools them into counts and percentages. :func:`session_cap` is a re-selection that reads
no gold (at most c turns a session among the first k, the rest of the places filled in rank order), the
simplest form of the session diversity the misses point to, scored by the bench against the ranking's own
first k; :func:`uncovered` and :func:`word_swap` test the other obvious signal, a turn that brings a question
word the first k turns lack (stemmed, stop words out: ``text.tokenize``).

Any gold and all gold are the metrics of ``bfr_core.evaluation.metrics`` (``turn_hit``,
``complete_evidence_recall``), so these figures agree with the sufficiency bench's at the same k.

Does not cover: reading dumps and stores, the JSON (``bench.quality.bench_sufficiency_misses``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from bfr_core.evaluation.metrics import complete_evidence_recall, turn_hit
from bfr_core.text import tokenize

Where = Mapping[str, tuple[str, int]]  # turn id -> (session id, 0-based position in the session)
BANDS = ("rank_11_20", "rank_21_40", "not_in_40")


def _band(rank: int | None, k: int) -> str:
    """The rank band of a missing gold turn (1-based rank in the arm's order, ``None`` when absent)."""
    if rank is None:
        return "not_in_40"
    return "rank_11_20" if rank <= max(20, k) else "rank_21_40"


def _near(turn: str, found: Iterable[str], where: Where, reach: int) -> bool:
    """``turn`` is in the session of a found turn, at most ``reach`` positions from it."""
    if turn not in where:
        return False
    session, pos = where[turn]
    return any(f in where and where[f][0] == session and abs(where[f][1] - pos) <= reach for f in found)


def swap_in(first: Sequence[str], add: Sequence[str], gold: frozenset[str], k: int) -> list[str]:
    """``first`` (at most k turns) with the turns of ``add`` put in: into free places up to k, then each over
    the lowest-ranked non-gold turn left; a turn that finds no place is dropped."""
    out = list(first)
    for t in add:
        if t in out:
            continue
        if len(out) < k:
            out.append(t)
            continue
        spare = [i for i, x in enumerate(out) if x not in gold]
        if spare:
            out[spare[-1]] = t
    return out


def anatomy(ranked: Sequence[str], gold: Iterable[str], where: Where, k: int = 10, head: int = 40) -> dict:
    """One question's anatomy at ``k`` from its evidence in the arm's order (``ranked``, up to ``head`` turns),
    its gold turn ids and ``where`` (turn id -> (session, position)) covering the ranked and the gold turns.

    Always: ``any``, ``all`` (booleans at k) and the two oracle outcomes, ``oracle_head`` (every missing gold
    turn ranked k+1..head swapped in) and ``oracle_adjacent`` (every missing gold turn within one position of
    a found gold turn in its session swapped in, wherever the arm ranked it). When relevant but insufficient
    also ``missing``: one record per missing gold turn (its rank band, same session as a found gold turn, within
    one / two positions of one, in a session none of the first k turns come from) and the first k turns'
    figures: how many come from the found gold's sessions, their distinct sessions, the gold's distinct sessions.
    """
    g = frozenset(gold)
    ranked = list(ranked)[:head]
    first = ranked[:k]
    rank = {t: i + 1 for i, t in enumerate(ranked)}
    found = [t for t in first if t in g]
    out: dict = {"any": bool(turn_hit(first, g)), "all": bool(complete_evidence_recall(first, g))}
    missing = sorted((t for t in g if t not in first), key=lambda t: (rank.get(t, head + 1), t))
    in_head = [t for t in missing if t in rank]
    adjacent = [t for t in missing if _near(t, found, where, 1)]
    out["oracle_head"] = bool(complete_evidence_recall(swap_in(first, in_head, g, k), g))
    out["oracle_adjacent"] = bool(complete_evidence_recall(swap_in(first, adjacent, g, k), g))
    if not out["any"] or out["all"]:
        return out
    first_sessions = {where[t][0] for t in first if t in where}
    found_sessions = {where[t][0] for t in found if t in where}
    out["missing"] = [{
        "band": _band(rank.get(t), k),
        "same_session": t in where and where[t][0] in found_sessions,
        "within_1": _near(t, found, where, 1),
        "within_2": _near(t, found, where, 2),
        "unseen_session": t in where and where[t][0] not in first_sessions,
        "unplaced": t not in where,
    } for t in missing]
    out["first_k"] = {
        "turns": len(first),
        "from_found_sessions": sum(1 for t in first if t in where and where[t][0] in found_sessions),
        "sessions": len(first_sessions),
        "gold_sessions": len({where[t][0] for t in g if t in where}),
    }
    return out


def _pct(part: float, whole: float) -> float:
    return round(100 * part / whole, 2) if whole else 0.0


def summarize(anatomies: Sequence[dict]) -> dict:
    """Counts and percentages over :func:`anatomy` records: the questions' any / all / insufficient at k and
    both oracles (percent of the questions), where the missing gold turns sit (percent of those turns) and the
    insufficient sets' first-k figures (means, and the found-session share of their turns)."""
    n = len(anatomies)
    out: dict = {"questions": n}
    for name in ("any", "all", "oracle_head", "oracle_adjacent"):
        c = sum(a[name] for a in anatomies)
        out[name] = {"count": c, "pct": _pct(c, n)}
    short = [a for a in anatomies if "missing" in a]
    out["insufficient"] = {"count": len(short), "pct": _pct(len(short), n),
                           "pct_of_any": _pct(len(short), out["any"]["count"])}
    miss = [m for a in short for m in a["missing"]]
    where: dict = {"missing_gold_turns": len(miss)}
    for name in (*BANDS, "same_session", "within_1", "within_2", "unseen_session", "unplaced"):
        c = sum(m["band"] == name if name in BANDS else m[name] for m in miss)
        where[name] = {"count": c, "pct": _pct(c, len(miss))}
    out["missing"] = where
    fk = [a["first_k"] for a in short]
    turns = sum(f["turns"] for f in fk)
    out["first_k_of_insufficient"] = {
        "turns": turns,
        "from_found_sessions": {"count": sum(f["from_found_sessions"] for f in fk),
                                "pct": _pct(sum(f["from_found_sessions"] for f in fk), turns)},
        "mean_from_found_sessions": round(sum(f["from_found_sessions"] for f in fk) / len(fk), 2) if fk else 0.0,
        "mean_distinct_sessions": round(sum(f["sessions"] for f in fk) / len(fk), 2) if fk else 0.0,
        "mean_gold_sessions": round(sum(f["gold_sessions"] for f in fk) / len(fk), 2) if fk else 0.0,
    }
    for name in ("oracle_head", "oracle_adjacent"):
        out[name]["gain_over_all"] = round(out[name]["pct"] - out["all"]["pct"], 2)
    return out


def session_cap(ranked: Sequence[str], where: Where, cap: int, k: int = 10) -> list[str]:
    """The first ``k`` turns of ``ranked`` taking at most ``cap`` turns from a session (a turn ``where`` does not
    place is its own session), then filling the places left with the turns skipped, in rank order."""
    out: list[str] = []
    skipped: list[str] = []
    per: dict[str, int] = {}
    for t in ranked:
        if len(out) == k:
            break
        session = where[t][0] if t in where else t
        if per.get(session, 0) < cap:
            out.append(t)
            per[session] = per.get(session, 0) + 1
        else:
            skipped.append(t)
    return out + skipped[:k - len(out)]


def uncovered(question: str, first_texts: Sequence[str]) -> frozenset[str]:
    """The question's stemmed content words that none of ``first_texts`` holds."""
    covered: set[str] = set()
    for text in first_texts:
        covered.update(tokenize(text, stemmed=True))
    return frozenset(tokenize(question, stemmed=True)) - covered


def brings(text: str, words: frozenset[str]) -> bool:
    """Whether ``text`` holds one of ``words`` (stemmed content words)."""
    return bool(words) and not words.isdisjoint(tokenize(text, stemmed=True))


def word_swap(ranked: Sequence[str], texts: Mapping[str, str], question: str, swaps: int, k: int = 10) -> list[str]:
    """The first ``k - swaps`` turns of ``ranked``, then, in rank order, turns after them that bring a question
    word those turns lack (:func:`uncovered`, updated after each pick), then the ranking's next turns until k.
    Reads no gold."""
    out = list(ranked[:k - swaps])
    missing = uncovered(question, [texts.get(t, "") for t in out])
    for t in ranked[k - swaps:]:
        if len(out) == k:
            break
        if brings(texts.get(t, ""), missing):
            out.append(t)
            missing = missing - frozenset(tokenize(texts.get(t, ""), stemmed=True))
    for t in ranked:
        if len(out) == k:
            break
        if t not in out:
            out.append(t)
    return out
