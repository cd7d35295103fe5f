"""MRAgent-Flat* - a same-store adaptation of MRAgent (Ji et al., 2026), as in the paper's Appendix E:
the tool-choosing policy restricted to flat turns (no Cue-Tag-Content graph, no derived facts).
Table 11 reports 2.54 calls and 11.8 turns on the LoCoMo pilot; this policy lands near that.

Loop (at most :data:`MAX_CALLS` calls, :data:`MAX_SIZE` turns):

    1. text(q), keep the first :data:`FIRST_KEEP` hits
    2. choose the next tool from the evidence state - offline rules, or
       ``bfr_core.roles.tool_chooser.choose_tool`` when an LLM is set (the cue is still built by the rules):
         entity   an uncovered name requirement (cue: that name), once per name
         session  a temporal/bridge requirement is uncovered and the best hit's conversation has not
                  been opened (cue: the best not-yet-anchored evidence turn)
         text     an uncovered requirement not yet searched (cue: its text)
         entity   FirstPerson(q)'s own turns, once, when requirements are still uncovered after that
                  (the offline decomposer's who/when/where slots are often open at this point)
         stop     requirements still uncovered but nothing left to try
       when every requirement is covered by words (Stage I's lexical test), confirm once:
         entity   FirstPerson(q)'s own turns, if the question names a person
         session  the best hit's conversation, for temporal / bridge / list questions
         stop     otherwise
    3. call it excluding the evidence, re-rank the hits by BM25 relevance to q (ties: view rank),
       keep :data:`LATER_KEEP`; repeat.

Does not cover: MRAgent's graph memory, tags, and LLM-written cues.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from bfr_core.llm.base import LLMCallFailed
from bfr_core.method.requirements import Requirement, covers_lexically, decompose_with_source, first_person
from bfr_core.method.stage1 import turn_stems
from bfr_core.method.stage2 import scope_speakers
from bfr_core.records import Hit, Query, Step
from bfr_core.roles import tool_chooser
from bfr_core.roles.fit import fit_for

if TYPE_CHECKING:
    from bfr_core.method.arms import ArmContext

MAX_CALLS = 4
MAX_SIZE = 12
FIRST_KEEP = 8
LATER_KEEP = 3
DEPTH = 12  # hits asked of a view per call
VIEW_ATTR = {"text": "bm25", "entity": "entity", "session": "session"}


def covered(views: Any, reqs: Sequence[Requirement], evidence: Sequence[str]) -> set[str]:
    stems = turn_stems(views)
    pos = views.position
    out = set()
    for r in reqs:
        if any(covers_lexically(r, views.turns[pos[t]], stems[pos[t]]) for t in evidence):
            out.add(r.rid)
    return out


def rule_choice(reqs: Sequence[Requirement], done: set[str], used: set[tuple[str, str]],
                evidence: Sequence[str], person: str | None = None) -> tuple[str, str, str]:
    """(tool, cue, why) by the offline rules (see the module docstring)."""
    missing = [r for r in reqs if r.rid not in done]
    for r in missing:
        if r.kind == "entity" and ("entity", r.text) not in used:
            return "entity", r.text, f"{r.rid} names {r.text}, not yet in the evidence"
    if any(r.kind in ("temporal", "bridge") for r in missing):
        for t in evidence:
            if ("session", t) not in used:
                return "session", t, "a temporal/bridge requirement is open: read around the best hit"
    for r in missing:
        if r.kind != "entity" and ("text", r.text) not in used:
            return "text", r.text, f"{r.rid} is uncovered: search its words"
    if missing and person and not any(tool == "entity" for tool, _ in used):
        return "entity", person, f"{missing[0].rid} is still open: read {person}'s own turns"
    if missing:
        return "stop", "", "nothing left to try"
    # Every requirement looks covered by words alone: confirm once from the person's own turns,
    # and for dated / chained / list questions once from the best hit's conversation.
    if person and not any(tool == "entity" for tool, _ in used):
        return "entity", person, f"covered; confirm from {person}'s own turns"
    needs_context = any(r.kind in ("temporal", "bridge", "list") for r in reqs)
    if needs_context and evidence and not any(tool == "session" for tool, _ in used):
        return "session", evidence[0], "covered; read the best hit's conversation for dates and links"
    return "stop", "", "every requirement is covered"


def _cue_for(tool: str, reqs: Sequence[Requirement], done: set[str], used: set[tuple[str, str]],
             evidence: Sequence[str], query: Query) -> str:
    missing = [r for r in reqs if r.rid not in done]
    if tool == "entity":
        return next((r.text for r in missing + list(reqs) if r.kind == "entity" and ("entity", r.text) not in used), "")
    if tool == "session":
        return next((t for t in evidence if ("session", t) not in used), "")
    if tool == "text":
        return next((r.text for r in missing if r.kind != "entity" and ("text", r.text) not in used), query.text)
    return ""


def mragent_flat(ctx: ArmContext, query: Query) -> list[Step]:
    views = ctx.views
    reqs, source = decompose_with_source(query, ctx.llm)
    steps = [Step("requirements", f"{len(reqs)} requirement(s)", (), 0, {
        "requirements": [r.to_dict() for r in reqs], "source": source})]
    relevance = views.bm25_scores(query.text)
    person = first_person(query.text, scope_speakers(views))
    pos = views.position
    evidence: list[str] = []
    used: set[tuple[str, str]] = set()
    calls = 0
    tool, cue, why = "text", query.text, "first look: the question itself"
    while calls < MAX_CALLS and len(evidence) < MAX_SIZE:
        if calls:
            done = covered(views, reqs, evidence)
            tool, cue, why = rule_choice(reqs, done, used, evidence, person)
            if ctx.llm is not None:
                try:
                    tool, cue, why = _llm_choice(ctx.llm, query, views, evidence, reqs, done, used)
                except LLMCallFailed as exc:  # keep the rules' choice; the trace says why
                    why = f"{why} (offline rules: provider call failed: {exc.reason})"
            if tool == "stop" or not cue:
                steps.append(Step("stop", "Stop", tuple(evidence), calls, {"reason": why}))
                break
        used.add((tool, cue))
        hits: list[Hit] = getattr(views, VIEW_ATTR[tool]).search(cue, DEPTH, frozenset(evidence))
        hits = [h for h in hits if h.turn_id not in evidence]
        calls += 1
        keep = FIRST_KEEP if calls == 1 else LATER_KEEP
        if tool != "text":  # entity/session lists are not ranked for q: re-rank them by relevance
            hits = sorted(hits, key=lambda h: (-float(relevance[pos[h.turn_id]]), h.rank))
        kept = [h.turn_id for h in hits[: min(keep, MAX_SIZE - len(evidence))]]
        evidence.extend(kept)
        steps.append(Step("tool", f"Call {calls}: {tool}", tuple(evidence), calls, {
            "tool": tool, "view": VIEW_ATTR[tool], "cue": cue, "why": why,
            "candidates": [h.turn_id for h in hits], "retained": kept,
        }))
    return steps


def _llm_choice(llm: Any, query: Query, views: Any, evidence: Sequence[str], reqs: Sequence[Requirement],
                done: set[str], used: set[tuple[str, str]]) -> tuple[str, str, str]:
    shown = fit_for(llm, query.text, [views.by_id[t].text for t in evidence])
    tool = tool_chooser.choose_tool(llm, query.text, shown, ["text", "entity", "session", "stop"])
    if tool == "stop":
        return "stop", "", "the model chose stop"
    cue = _cue_for(tool, reqs, done, used, evidence, query)
    return tool, cue, "the model chose " + tool
