"""What the answer and judge commands share: opening an existing store after checking the ``--json``
target, and printing their JSON result (also to ``--json``, written through ``outfile``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bfr_core.errors import BfrError
from bfr_core.outfile import check_output, write_output
from bfr_core.store import Store


def open_store(db: str, json_path: str | None, force: bool = False) -> Any:
    """The store at ``db`` (which must exist), once ``json_path`` (if any) is known to be writable
    (an existing file only with ``force``)."""
    if not Path(db).exists():
        raise BfrError(f"store {db} does not exist")
    if json_path:
        check_output(json_path, option="--json", store=db, force=force)
    return Store(db)


def emit(text: str, json_path: str | None, db: str, force: bool = False) -> None:
    """Print ``text``; also write it to ``json_path`` when given."""
    if json_path:
        write_output(json_path, text + "\n", option="--json", store=db, force=force)
    print(text)


def add_force(p: Any) -> None:
    p.add_argument("--force", action="store_true", help="replace an existing output file")
