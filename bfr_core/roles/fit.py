"""Fit an evidence set into a model's context: keep every snippet, shorten the longest ones.

A 40-turn LongMemEval set is ~60,000 characters (assistant turns run to thousands), four times
what the local model's 4,096-token context holds. Dropping snippets would change the set being
judged, so instead each snippet keeps a share of a length budget (water-filling: short snippets
stay whole, long ones are cut to one common cap), and a cut snippet keeps its sentences that share
the most words with the question, in their original order, joined by " … ". Only the question is
used, never the answer or gold ids, so the answerer and the blinded judges can all read the same
fitted set.

Covers :func:`fit_snippets` (pure, deterministic; a ``measure`` callable such as a tokenizer's count
makes the budget exact), :func:`prompt_budget` (the smallest budget any client in a chain of
wrappers declares) and :func:`fit_for` (both: what every LLM role that reads snippets calls). Does not cover: summarising, re-ranking, dropping snippets.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from bfr_core.roles.snippets import HEADER
from bfr_core.sentences import sentences
from bfr_core.text import tokenize

ELLIPSIS = " … "
# A rendered snippet's "(date) speaker: " header (``roles.snippets``): always kept, so a
# cut snippet still says who spoke and when.


def _trim(text: str, cue: set[str], cap: int) -> str:
    """At most ``cap`` characters of ``text``: its header, then its sentences with the most cue words,
    in order."""
    if len(text) <= cap:
        return text
    m = HEADER.match(text)
    if m and len(m.group(0)) < cap:
        return m.group(0) + _trim(text[m.end():], cue, cap - len(m.group(0)))
    parts = sentences(text)
    scored = sorted(range(len(parts)),
                    key=lambda i: (-len(cue & set(tokenize(parts[i], stemmed=True))), i))
    keep: set[int] = set()
    used = 0
    for i in scored:
        extra = len(parts[i]) + (len(ELLIPSIS) if keep else 0)
        if used + extra <= cap:
            keep.add(i)
            used += extra
    if not keep:  # one sentence longer than the cap: its best-matching stretch would need more; take the head
        return text[: max(0, cap - 1)].rstrip() + "…"
    out, last = [], None
    for i in sorted(keep):
        if last is not None:
            out.append(" " if i == last + 1 else ELLIPSIS)
        out.append(parts[i])
        last = i
    return "".join(out)


def fit_snippets(texts: Sequence[str], question: str, budget: int,
                 measure: Callable[[str], int] = len) -> list[str]:
    """``texts`` unchanged when ``measure`` of their total fits ``budget``; otherwise every snippet
    cut to a common character cap (lowered until the total fits), each keeping its sentences most
    like the question. Deterministic; the order and number of snippets never change."""
    texts = list(texts)
    joined = "\n".join(texts)
    total = measure(joined)  # with a tokenizer as measure, the set is tokenised once here
    if budget <= 0 or total <= budget:
        return texts
    cue = set(tokenize(question, stemmed=True))
    lengths = sorted(len(t) for t in texts)
    # water-filling on characters: the largest cap whose total fits the budget's character share
    share = budget * len(joined) // max(1, total)
    cap, rest = lengths[-1], share
    for n_left, length in zip(range(len(lengths), 0, -1), lengths, strict=True):
        if length * n_left > rest:
            cap = rest // n_left
            break
        rest -= length
    fitted = [_trim(t, cue, cap) for t in texts]
    while cap > 20 and measure("\n".join(fitted)) > budget:
        cap = int(cap * 0.9)
        fitted = [_trim(t, cue, cap) for t in texts]
    return fitted


def prompt_budget(clients: Iterable[Any]) -> tuple[int, Callable[[str], int]] | None:
    """The tightest ``(evidence budget, measure)`` any client declares through an
    ``evidence_budget()`` method, looking through wrappers' ``inner``; None when none has a limit."""
    found = []
    for client in clients:
        seen = client
        while seen is not None:
            declare = getattr(seen, "evidence_budget", None)
            if callable(declare):
                found.append(declare())
                break
            seen = getattr(seen, "inner", None)
    return min(found, key=lambda b: b[0]) if found else None


def fit_for(clients: Any, question: str, texts: Sequence[str]) -> list[str]:
    """``texts`` fitted to the tightest budget of ``clients`` (one client or several), or unchanged
    when none declares one (API models)."""
    budget = prompt_budget(clients if isinstance(clients, list | tuple) else [clients])
    return fit_snippets(texts, question, *budget) if budget else list(texts)
