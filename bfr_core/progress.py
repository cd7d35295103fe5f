"""Progress reporting without a UI dependency: core code calls ``progress(done, total, label)``.

Covers: the :data:`Progress` callback (the CLI passes a tqdm-backed one, the app an ``st.progress``
one; ``None`` means silent), :class:`RunStatus` (a long LLM run's counters: units done, calls done
and failed, tokens, spend, and an ETA from the rate so far) with its one-line rendering, and
:func:`tqdm_progress`. A run's status travels as the ``label`` argument (its :meth:`RunStatus.line`),
so every existing callback shows it unchanged. Also: :func:`eta_seconds` / :func:`fmt_eta` (the app's
ETA), :func:`restarts` (where one bar ends and the next begins), :class:`Pace` (one bar over a
job's parts that tracks time: rates measured online), :class:`Recorder` (a callback that keeps every update, for benches and tests) and :func:`ticking`
(keeps a bar alive during one long step, counting its sub-steps on a :class:`StepMeter`). Does not cover: computing the counters (the callers), drawing
(the app's ``ui.widgets``, tqdm here).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from tqdm import tqdm

T = TypeVar("T")
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


# -- the ETA of a progress bar (the app's ingest bar, bench/speed/bench_app_ingest.py) ----------------
def eta_seconds(elapsed: float, done: int, total: int) -> float | None:
    """Seconds left at the average rate so far (``None`` before any work is done or when unknown)."""
    if done <= 0 or total <= 0 or elapsed <= 0:
        return None
    return max(elapsed * (total - done) / done, 0.0)


def restarts(prev: tuple[int, int] | None, done: int, total: int) -> bool:
    """Whether ``(done, total)`` after ``prev`` starts a new bar (and its ETA clock): the total changed
    or the count went back. The label may change within one bar (an ingest's encoding bar runs over
    several models and counts texts in its label), so it is not a stage boundary."""
    return prev is None or total != prev[1] or done < prev[0]


def fmt_eta(seconds: float | None) -> str:
    """``"about 1 min 20 s left"``; ``""`` when unknown."""
    if seconds is None:
        return ""
    s = int(round(seconds))
    return f"about {s // 60} min {s % 60:02d} s left" if s >= 60 else f"about {s} s left"


class Pace:
    """One bar over a job of several parts whose count tracks time, not units.

    Each part has a size in its own unit (characters, MiniLM tokens, a model load) and a prior cost
    in seconds per unit. A part's rate is re-estimated from its own completed work (seconds spent
    in it over units done) once :attr:`TRUSTED` of it is done; a part not measured yet costs its prior
    times the speed measured so far (measured seconds over what the priors predicted for that work,
    over the parts that have run :attr:`SPEED_MIN_S` or more), so the priors only set the parts'
    relative weights. :meth:`count` is ``SCALE * elapsed / (elapsed + seconds left)``, never
    going back, so ``eta_seconds(elapsed, count, SCALE)`` (the app's and the bench's ETA) and tqdm's
    are the estimate. Parts may overlap (a model loading while another part runs); time spent in a
    part runs from :meth:`begin` to :meth:`end`.

    A part whose prior was measured on this machine (``calibrated``, or :meth:`set_prior`) is priced at
    that prior alone: the speed the other parts measured is how this machine compares with the machine
    their priors came from, which a calibrated prior already says (scaling it by that speed again
    would count the machine's difference twice and put the ETA far short); for the same reason its own
    measured rate does not set the others' speed."""

    SCALE = 10_000
    # A part's own rate counts once it has done this share of its units: its first chunks are not its
    # average (MiniLM's first chunk holds the shortest texts in spread order while the other worker is
    # still busy, so its rate overstates the rest many times over); before that it runs down its prior
    # at the speed measured so far.
    TRUSTED = 0.1
    # A part sets the speed of the parts not measured yet only after this many seconds: a short part's
    # rate is mostly its fixed costs (a small dataset's static vectors run beside the MiniLM import at
    # several times their per-character prior, which would inflate every later part's ETA).
    SPEED_MIN_S = 5.0

    def __init__(self, sizes: dict[str, float], priors: dict[str, float],
                 clock: Callable[[], float] | None = None, calibrated: Iterable[str] = ()) -> None:
        self.sizes = {k: float(v) for k, v in sizes.items() if v > 0}
        self.priors = dict(priors)
        self.calibrated = set(calibrated)  # parts whose prior is this machine's (not scaled by the speed)
        self.clock = clock or time.perf_counter
        self.start = self.clock()
        self.units = dict.fromkeys(self.sizes, 0.0)
        self.spent = dict.fromkeys(self.sizes, 0.0)
        self.since: dict[str, float] = {}
        self.shown = 0

    def set_prior(self, part: str, seconds_per_unit: float) -> None:
        """Replace ``part``'s prior by this machine's measured speed (a calibration): from now on it is
        priced at that alone."""
        self.priors[part] = seconds_per_unit
        self.calibrated.add(part)

    def begin(self, part: str) -> None:
        if part in self.sizes and part not in self.since:
            self.since[part] = self.clock()

    def stop(self, part: str, at: float | None = None) -> None:
        """Stop ``part``'s clock, now or ``at`` (a time of :attr:`clock` already past: when a task run
        elsewhere ended); it may :meth:`begin` again, e.g. for its next task."""
        if part in self.since:
            self.spent[part] += (self.clock() if at is None else at) - self.since.pop(part)

    def end(self, part: str, at: float | None = None) -> None:
        """Stop ``part``'s clock (now or ``at``) and count it done."""
        self.stop(part, at)
        if part in self.sizes:
            self.units[part] = self.sizes[part]

    def add(self, part: str, units: float) -> None:
        if part in self.sizes:
            self.units[part] = min(self.units[part] + units, self.sizes[part])

    def _spent(self, part: str, now: float) -> float:
        return self.spent[part] + (now - self.since[part] if part in self.since else 0.0)

    def seconds_left(self) -> float:
        now = self.clock()
        measured = [p for p in self.sizes if self.units[p] >= self.TRUSTED * self.sizes[p] and self._spent(p, now) > 0]
        timed = [p for p in measured if self._spent(p, now) >= self.SPEED_MIN_S and p not in self.calibrated]
        predicted = sum(self.priors[p] * self.units[p] for p in timed)
        speed = sum(self._spent(p, now) for p in timed) / predicted if predicted > 0 else 1.0
        left = 0.0
        for part, size in self.sizes.items():
            done = self.units[part]
            if part in measured:
                left += (size - done) * self._spent(part, now) / done
            else:  # not measured: the prior (at the speed so far unless calibrated), less the time it has run
                pace = 1.0 if part in self.calibrated else speed
                left += max(size * self.priors[part] * pace - self._spent(part, now), 0.0)
        return left

    def count(self) -> int:
        """Where the bar stands, of :attr:`SCALE`: the elapsed share of the estimated whole."""
        elapsed = self.clock() - self.start
        left = self.seconds_left()
        whole = elapsed + left
        frac = elapsed / whole if whole > 0 else 1.0
        self.shown = max(self.shown, min(int(self.SCALE * frac), self.SCALE - 1))
        return self.shown


class Recorder:
    """A Progress callback that keeps every update as ``(seconds since start, done, total, label)``,
    optionally passing each on to ``inner`` (a bench records what the app's bar would show)."""

    def __init__(self, inner: Progress | None = None, clock: Callable[[], float] | None = None) -> None:
        self.clock = clock or time.perf_counter
        self.start = self.clock()
        self.inner = inner
        self.updates: list[tuple[float, int, int, str]] = []

    def __call__(self, done: int, total: int, label: str) -> None:
        self.updates.append((self.clock() - self.start, done, total, label))
        if self.inner:
            self.inner(done, total, label)

    def max_gap(self, until: float | None = None) -> float:
        """The longest wait between updates (from the start, and to ``until`` when given)."""
        times = [0.0, *(u[0] for u in self.updates), *([until] if until is not None else [])]
        return max((b - a for a, b in zip(times, times[1:], strict=False)), default=0.0)


class StepStopped(Exception):
    """Raised inside a :func:`ticking` step by :meth:`StepMeter.advance` once the caller has stopped."""


class StepMeter:
    """The sub-steps of one long :func:`ticking` step: the step calls :meth:`advance` as it goes
    (from its worker thread), the bar shows ``done`` of ``total``; once the caller cancels, the next
    :meth:`advance` raises :class:`StepStopped` so the step ends early instead of being waited out."""

    def __init__(self, total: int = 1) -> None:
        self.done = 0
        self.total = max(1, total)
        self.stopped = False

    def advance(self, n: int = 1) -> None:
        if self.stopped:
            raise StepStopped("stopped by the caller")
        self.done += n


def ticking(fn: Callable[[], T], progress: Progress | None, label: str, *, every: float = 1.0,
            done: int = 0, total: int = 1, meter: StepMeter | None = None) -> T:
    """Run ``fn()`` (one long step: loading a model, one write transaction, parsing every text) in a
    worker thread and call ``progress(done, total, label)`` every ``every`` seconds from the calling
    thread until it ends, so a bar never sits still; with a ``meter`` (which ``fn`` advances) the
    bar shows the meter's count. When ``progress`` raises (the app's Cancel), the meter is stopped
    (the step gives up at its next sub-step), the step is waited for (a transaction is never cut in
    half) and the exception re-raised. ``fn``'s own exception is re-raised in the caller."""
    if progress is None:
        return fn()

    box: dict[str, object] = {}

    def work() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            box["error"] = exc

    worker = threading.Thread(target=work, name=f"bfr-{label[:20]}", daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            progress(*((meter.done, meter.total) if meter else (done, total)), label)
            worker.join(every)
    except BaseException:
        if meter is not None:
            meter.stopped = True
        worker.join()
        raise
    if meter is not None:
        progress(meter.total, meter.total, label)
    elif (done, total) == (0, 1):
        progress(1, 1, label)
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]
