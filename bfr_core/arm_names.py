"""The workbench's own arm's public name, and the one home of the arm aliases every reader accepts.

Our arm (``method.ours``: conversation-aware score fusion, then the Stage I cover and budgeted rounds)
is registered as :data:`CONV_FUSION`, a name that cannot be read as the paper's BFR arms
(``bfr-text``, ``bfr-mv``). ``bfr`` is accepted as an alias of it everywhere a name comes in: ``--arms``
and ``--arm`` options, the arm column of runs stored under that name (never rewritten), imported
files, and the keys of bench outputs the docs generators read. A reader maps a name it shows through
:func:`canonical_arm`; a name a user typed is matched to a stored one through :func:`stored_name`.

Does not cover: the registry of arm functions (``pipeline.ARMS``), plug-in arms' names.
"""

from __future__ import annotations

from collections.abc import Iterable

CONV_FUSION = "conv-fusion"

ALIASES: dict[str, str] = {"bfr": CONV_FUSION}  # alias -> the arm's registered name


def canonical_arm(name: str) -> str:
    """The registered name of the arm ``name`` names (``name`` itself when it is no alias)."""
    return ALIASES.get(name, name)


def same_arm(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` name the same arm (one may be an alias of the other)."""
    return canonical_arm(a) == canonical_arm(b)


def stored_name(name: str, stored: Iterable[str]) -> str:
    """The name among ``stored`` (a run's arms as stored) that names the same arm as ``name``; ``name``
    itself when ``stored`` holds it or holds no such name."""
    stored = list(stored)
    if name in stored:
        return name
    return next((s for s in stored if same_arm(s, name)), name)


def stored_names(name: str) -> tuple[str, ...]:
    """Every name an arm may be stored under: its registered name, then its aliases."""
    canonical = canonical_arm(name)
    return (canonical, *sorted(a for a, c in ALIASES.items() if c == canonical))


def canonical_arm_sql(column: str) -> str:
    """SQL giving the registered name of the arm in ``column`` (for a query that groups or partitions by
    arm): a CASE over :data:`ALIASES`, whose names are constants of this module, never user input."""
    cases = " ".join(f"WHEN '{alias}' THEN '{name}'" for alias, name in ALIASES.items())
    return f"(CASE {column} {cases} ELSE {column} END)"
