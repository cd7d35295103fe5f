"""Paired significance tests and agreement statistics used in the paper's appendices.

Covers
------
* :func:`mcnemar_exact` - two-sided exact McNemar test on paired binary outcomes (Judge,
  Turn Hit): a binomial test of the discordant pairs against p = 1/2, computed with exact
  integer arithmetic, p capped at 1.
* :func:`paired_bootstrap` - question-level paired bootstrap of a mean difference (Stem F1):
  10,000 resamples, seed 20260908, numpy ``Generator``, 95% percentile interval.
* :func:`holm` - Holm step-down adjusted p-values (type-level comparisons).
* :func:`wilson_interval` - Wilson score interval of one proportion (a hit rate over n questions),
  which stays inside [0, 1] and is not degenerate at 0 / n or n / n as the normal interval is.
* :func:`confusion_matrix` and :func:`cohen_kappa` - agreement between two raters
  (e.g. the two sufficiency judges, or a human and a judge), any hashable label set.

Does not cover: clustered / conversation-level bootstrap, weighted kappa, Fleiss' kappa,
mid-p or continuity-corrected McNemar, other multiplicity corrections (Bonferroni is p*m).
Pure functions; inputs are never mutated.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from statistics import NormalDist

import numpy as np

__all__ = [
    "BOOTSTRAP_SEED",
    "BOOTSTRAP_RESAMPLES",
    "McNemarResult",
    "BootstrapResult",
    "ConfusionMatrix",
    "mcnemar_exact_p",
    "mcnemar_exact",
    "mcnemar_by_key",
    "paired_bootstrap",
    "holm",
    "wilson_interval",
    "confusion_matrix",
    "cohen_kappa",
]

BOOTSTRAP_SEED = 20260908  # the paper's seed (Table 12)
BOOTSTRAP_RESAMPLES = 10_000  # the paper's sample count (Table 12)
# Resamples drawn per block, so memory stays ~chunk * n integers for any n. Fixed, because the
# exact sequence of draws (and so the interval) must not depend on anything but the seed.
_BOOTSTRAP_CHUNK = 1_000


def _paired(x: Sequence, y: Sequence, what: str) -> None:
    if isinstance(x, str) or isinstance(y, str):
        raise TypeError(f"{what}: expected sequences, got a string")
    if len(x) != len(y):
        raise ValueError(f"{what}: paired inputs differ in length ({len(x)} vs {len(y)})")
    if len(x) == 0:
        raise ValueError(f"{what}: no pairs")


# --------------------------------------------------------------------------------------------
# Exact McNemar
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class McNemarResult:
    n: int  # pairs
    x_only: int  # x correct, y wrong
    y_only: int  # x wrong, y correct
    p_value: float  # two-sided exact

    @property
    def delta(self) -> float:
        """Difference of the two success rates, x minus y, as a fraction (not points; 0.0 over no pairs)."""
        return (self.x_only - self.y_only) / self.n if self.n else 0.0


def mcnemar_exact_p(x_only: int, y_only: int) -> float:
    """Two-sided exact McNemar p from the discordant counts b = x_only, c = y_only.

    p = min(1, 2 * P[Bin(b + c, 1/2) <= min(b, c)]). Summed as exact integers and divided once,
    so tiny p-values (e.g. 13 vs 0 -> 2/2^13) are exact rather than accumulated floats.
    No discordant pairs gives p = 1.
    """
    if x_only < 0 or y_only < 0:
        raise ValueError("discordant counts must be >= 0")
    n = x_only + y_only
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(x_only, y_only) + 1))
    return float(min(Fraction(1), Fraction(2 * tail, 2**n)))


def mcnemar_exact(x: Sequence[bool], y: Sequence[bool]) -> McNemarResult:
    """Exact McNemar on paired binary outcomes of the same questions under methods x and y."""
    _paired(x, y, "mcnemar_exact")
    xb = [bool(v) for v in x]
    yb = [bool(v) for v in y]
    x_only = sum(1 for u, v in zip(xb, yb, strict=True) if u and not v)
    y_only = sum(1 for u, v in zip(xb, yb, strict=True) if v and not u)
    return McNemarResult(len(xb), x_only, y_only, mcnemar_exact_p(x_only, y_only))


def mcnemar_by_key(x: Mapping[Hashable, bool], y: Mapping[Hashable, bool]) -> McNemarResult:
    """:func:`mcnemar_exact` over the keys (question ids) both outcome maps share, in key order; no
    shared key gives no pairs (n 0, p 1.0) rather than an error: nothing was compared."""
    both = sorted(set(x) & set(y), key=str)
    if not both:
        return McNemarResult(0, 0, 0, 1.0)
    return mcnemar_exact([x[k] for k in both], [y[k] for k in both])


# --------------------------------------------------------------------------------------------
# Paired bootstrap
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BootstrapResult:
    delta: float  # observed mean(x) - mean(y), in the inputs' units
    ci_low: float
    ci_high: float
    n: int
    n_resamples: int
    seed: int
    confidence: float


def paired_bootstrap(
    x: Sequence[float],
    y: Sequence[float],
    *,
    n_resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    confidence: float = 0.95,
) -> BootstrapResult:
    """Question-level paired bootstrap of mean(x - y), with a percentile interval.

    Each resample draws n question indices with replacement from ``np.random.default_rng(seed)``
    and averages the per-question differences at those indices; the interval is the
    ((1 - confidence)/2, (1 + confidence)/2) percentiles (numpy's default linear interpolation)
    of the resampled means. Units are those of the inputs: pass F1 in [0, 1] and multiply by 100
    for points. The draws are drawn in blocks but equal the one-shot
    ``default_rng(seed).integers(0, n, size=(n_resamples, n))``, so anyone can reproduce the
    interval with those two lines; same inputs and seed give the same interval wherever numpy's
    default bit generator (PCG64) is the same.
    """
    _paired(x, y, "paired_bootstrap")
    if n_resamples < 1:
        raise ValueError("n_resamples must be >= 1")
    if not 0 < confidence < 1:
        raise ValueError("confidence must be in (0, 1)")
    diff = np.asarray(x, dtype=float) - np.asarray(y, dtype=float)
    if not np.all(np.isfinite(diff)):
        raise ValueError("paired_bootstrap: inputs must be finite")
    n = diff.size
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples)
    for start in range(0, n_resamples, _BOOTSTRAP_CHUNK):
        stop = min(start + _BOOTSTRAP_CHUNK, n_resamples)
        idx = rng.integers(0, n, size=(stop - start, n))
        means[start:stop] = diff[idx].mean(axis=1)
    # 50 -/+ 50*confidence gives exactly 2.5 / 97.5 for 0.95 (100*(1-0.95)/2 is 2.5000000000000022).
    half = 50.0 * confidence
    low, high = np.percentile(means, [50.0 - half, 50.0 + half])
    return BootstrapResult(float(diff.mean()), float(low), float(high), n, n_resamples, seed, confidence)


# --------------------------------------------------------------------------------------------
# Holm
# --------------------------------------------------------------------------------------------


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values, returned in input order.

    With p sorted ascending, adj_(i) = max_{j <= i} min(1, (m - j + 1) * p_(j)) (1-based). The
    running max makes the adjusted values monotone in the raw ones; reject H_i at level alpha
    iff adj_i <= alpha. Ties keep input order (stable sort), which gives them equal adjusted values.
    """
    if isinstance(pvalues, str):
        raise TypeError("pvalues must be a sequence of numbers")
    p = [float(v) for v in pvalues]
    if any(not (0.0 <= v <= 1.0) for v in p):  # also rejects NaN
        raise ValueError(f"p-values must be in [0, 1]: {p}")
    m = len(p)
    order = sorted(range(m), key=p.__getitem__)
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        adjusted[i] = running
    return adjusted


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson (1927) score interval of the proportion ``successes / n``, as fractions in [0, 1].

    centre = (p + z^2 / 2n) / (1 + z^2 / n), half-width = z * sqrt(p(1 - p) / n + z^2 / 4n^2) / (1 + z^2 / n),
    with z the two-sided standard-normal quantile of ``confidence``. Equals scipy's
    ``binomtest(successes, n).proportion_ci(confidence, method="wilson")``.
    """
    if isinstance(successes, bool) or isinstance(n, bool) or not all(isinstance(v, int) for v in (successes, n)):
        raise TypeError("successes and n must be integers")
    if n < 1 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n and n >= 1, got {successes} / {n}")
    if not 0 < confidence < 1:
        raise ValueError("confidence must be in (0, 1)")
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    p, z2 = successes / n, z * z
    denom = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    # at 0 / n (n / n) the bound is exactly 0 (1); float rounding would leave ~1e-17 either side
    lo = 0.0 if successes == 0 else max(0.0, centre - half)
    hi = 1.0 if successes == n else min(1.0, centre + half)
    return lo, hi


# --------------------------------------------------------------------------------------------
# Agreement
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ConfusionMatrix:
    """counts[i][j] = items rater A labelled labels[i] and rater B labelled labels[j]."""

    labels: tuple[Hashable, ...]
    counts: tuple[tuple[int, ...], ...]

    @property
    def total(self) -> int:
        return sum(map(sum, self.counts))

    @property
    def agreement(self) -> float:
        """Observed agreement p_o (the diagonal share)."""
        return sum(self.counts[i][i] for i in range(len(self.labels))) / self.total


def _default_labels(a: Sequence[Hashable], b: Sequence[Hashable]) -> tuple[Hashable, ...]:
    seen = list(dict.fromkeys([*a, *b]))
    try:
        return tuple(sorted(seen))  # type: ignore[type-var]
    except TypeError:  # unorderable mix of types: keep first-appearance order
        return tuple(seen)


def confusion_matrix(
    a: Sequence[Hashable], b: Sequence[Hashable], labels: Sequence[Hashable] | None = None
) -> ConfusionMatrix:
    """Rater A in rows, rater B in columns. ``labels`` fixes the order (and may include labels
    neither rater used); by default the sorted union of both raters' labels. A label outside
    ``labels`` raises ``ValueError`` rather than being dropped silently."""
    _paired(a, b, "confusion_matrix")
    labs = _default_labels(a, b) if labels is None else tuple(dict.fromkeys(labels))
    pos = {lab: i for i, lab in enumerate(labs)}
    counts = [[0] * len(labs) for _ in labs]
    for u, v in zip(a, b, strict=True):
        if u not in pos or v not in pos:
            raise ValueError(f"label {u if u not in pos else v!r} not in labels {labs}")
        counts[pos[u]][pos[v]] += 1
    return ConfusionMatrix(labs, tuple(tuple(r) for r in counts))


def cohen_kappa(
    a: Sequence[Hashable],
    b: Sequence[Hashable],
    labels: Sequence[Hashable] | None = None,
    *,
    degenerate: float = 1.0,
) -> float:
    """Cohen's kappa = (p_o - p_e) / (1 - p_e), with p_e from the two raters' marginals.

    Degenerate case: p_e = 1 happens only when both raters gave every item the same single label;
    then p_o = 1 too and kappa is 0/0. We return ``degenerate`` (default 1.0: the raters agree
    on every item and there is no disagreement to correct for) instead of dividing by zero.
    scikit-learn returns NaN here; pass ``degenerate=float("nan")`` to match it.
    """
    cm = confusion_matrix(a, b, labels)
    n = cm.total
    k = len(cm.labels)
    rows = [sum(cm.counts[i]) for i in range(k)]
    cols = [sum(cm.counts[i][j] for i in range(k)) for j in range(k)]
    # Exact fractions so p_e == 1 is detected exactly, not up to rounding.
    p_o = Fraction(sum(cm.counts[i][i] for i in range(k)), n)
    p_e = Fraction(sum(r * c for r, c in zip(rows, cols, strict=True)), n * n)
    if p_e == 1:
        return float(degenerate)
    return float((p_o - p_e) / (1 - p_e))
