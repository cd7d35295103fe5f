"""Progress reporting without a UI dependency: core code calls ``progress(done, total, label)``.

Covers: the :data:`Progress` callback (the CLI passes a tqdm-backed one, the app an ``st.progress``
one; ``None`` means silent), :class:`RunStatus` (a long LLM run's counters: units done, calls done
and failed, tokens, spend, and an ETA from the rate so far) with its one-line rendering, and
:func:`tqdm_progress`. A run's status travels as the ``label`` argument (its :meth:`RunStatus.line`),
so every existing callback shows it unchanged. Does not cover: computing the counters (the callers).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

Progress = Callable[[int, int, str], None]


def silent(done: int, total: int, label: str) -> None:  # noqa: ARG001 - the Progress signature
    return None


@dataclass(frozen=True, slots=True)
class RunStatus:
    done: int  # units of work finished (question x arm, or questions)
    total: int
    elapsed_s: float
    calls: int = 0  # LLM calls made (cache hits included)
    cached: int = 0
    failed: int = 0  # calls that failed for good
    tokens_in: int = 0  # provider tokens (cache hits are free)
    tokens_out: int = 0
    cost_usd: float | None = 0.0  # None: some model's price is unknown

    @property
    def eta_s(self) -> float | None:
        """Seconds left at the rate so far (None before the first unit)."""
        if self.done <= 0 or self.elapsed_s <= 0:
            return None
        return max(0.0, self.elapsed_s / self.done * (self.total - self.done))

    def line(self) -> str:
        """e.g. ``calls 412 (cached 30, failed 0) tokens 180k/9k $0.41 eta 2m10s``."""
        spend = "price unknown" if self.cost_usd is None else f"${self.cost_usd:.2f}"
        eta = "eta ?" if self.eta_s is None else f"eta {_duration(self.eta_s)}"
        return (f"calls {self.calls} (cached {self.cached}, failed {self.failed}) "
                f"tokens {_k(self.tokens_in)}/{_k(self.tokens_out)} {spend} {eta}")


def _k(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


def _duration(s: float) -> str:
    s = int(round(s))
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


def tqdm_progress(desc: str) -> Progress:
    """A Progress callback drawing one tqdm bar on stderr."""
    from tqdm import tqdm

    bar: dict[str, tqdm] = {}

    def update(done: int, total: int, label: str) -> None:
        if "bar" not in bar:
            bar["bar"] = tqdm(total=total, desc=desc, unit="it", leave=True)
        b = bar["bar"]
        b.total = total
        b.set_postfix_str(label[:90], refresh=False)
        b.n = done
        b.refresh()
        if done >= total:
            b.close()

    return update
