"""Progress reporting without a UI dependency: core code calls ``progress(done, total, label)``.

The CLI passes a tqdm-backed callback, the app an ``st.progress`` one; ``None`` means silent.
"""

from __future__ import annotations

from collections.abc import Callable

Progress = Callable[[int, int, str], None]


def silent(done: int, total: int, label: str) -> None:  # noqa: ARG001 - the Progress signature
    return None


def tqdm_progress(desc: str) -> Progress:
    """A Progress callback drawing one tqdm bar on stderr."""
    from tqdm import tqdm

    bar: dict[str, tqdm] = {}

    def update(done: int, total: int, label: str) -> None:
        if "bar" not in bar:
            bar["bar"] = tqdm(total=total, desc=desc, unit="it", leave=True)
        b = bar["bar"]
        b.total = total
        b.set_postfix_str(label[:40], refresh=False)
        b.n = done
        b.refresh()
        if done >= total:
            b.close()

    return update
