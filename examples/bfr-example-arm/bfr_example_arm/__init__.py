"""An example arm from another package: the scope's k most recent turns (a recency baseline).

Installed, it is found through the ``bfr.arms`` entry-point group (see this folder's
``pyproject.toml``) and runs like any built-in arm: ``bfr eval --arms example-recent``. The arm
contract (``bfr_core.method.arms``): ``fn(ctx, query) -> list[Step]``; the last step's evidence is
the arm's evidence set; the arm sees the question's text and date, never its gold or answer.
"""

from __future__ import annotations

from bfr_core.records import Step


def recent(ctx, query) -> list[Step]:  # noqa: ANN001 - ArmContext, Query
    """The last ``ctx.k`` turns of the scope, newest first."""
    turns = ctx.views.turns[-ctx.k:][::-1] if ctx.k else ()
    ids = tuple(t.turn_id for t in turns)
    return [Step(kind="topk", title=f"Example: the {len(ids)} most recent turns", evidence=ids, calls=1,
                 data={"view": "recency", "cue": query.text, "k": ctx.k,
                       "hits": [{"turn_id": t, "score": float(len(ids) - i)} for i, t in enumerate(ids)]})]
