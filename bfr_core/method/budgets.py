"""The completion-budget grid C0..C9 (paper Appendix I, Table 16) and ``budget_for(arm, name)``.

A budget is ``B = (B_step, B_call, B_new)`` plus the retention cap ``k_keep`` (Section 4.3). Every
completion call asks its view for :data:`CALL_DEPTH` unseen records; the retention rule keeps at
most ``keep`` per *round* (both schedules, one rule).

How the grid was worked out from Table 16 (realized mean calls / set size on the LoCoMo pilot;
E0 always holds b = 10 grounded turns, so "new" = size - 10)
--------------------------------------------------------------------------------------------------
* The C-number is the call cap: B_call = n for Cn (Text C1..C4 realize exactly n calls; MV C9
  realizes 8.98).
* BFR-Text, one text call per round, keeps the first 8 unseen hits (Section 4.4, k_keep = 8):
  C1 18, C2 26, C3 34 = 10 + 8n. C4 and C6 both realize 4.00 calls / 40.00 turns: the 4th round is
  clipped to 30 - 24 = 6 by B_new = 30 and the loop then stops (b_new = B_new), so C6 must allow at
  least 4 rounds - B_step cannot be the main configuration's 3 for Text C6. Text therefore uses
  B_step = B_call = n (one call per round makes rounds and calls the same cap).
* BFR-MV issues up to three calls a round (text, entity, session). A single text call (C1) adds
  11.91 records, so one call returns about 12 unseen records: CALL_DEPTH = 12 (Text's first-8 rule
  is unaffected). Two and three calls in one round (C2, C3) add 19.05 and 19.84 - a plateau at 20
  no matter how many candidates the round returns: k_keep = 20 per round for MV. With B_new = 30:
  C4 = 20 (round 1, three calls) + 10 (round 2, one text call, clipped) -> 39.72 paper / 40 here;
  C6 = 20 + 10 after two three-call rounds -> 5.99 calls / 39.88 paper, 6 / 40 here; the 0.01
  call deficit is a question without a person name (two calls a round, B_new exhausted after two
  rounds = 4 calls). C9 realizes 59.23 turns, beyond B_new = 30, so the large point raises B_new to
  50: 20 + 20 + 10 over three three-call rounds = 9 calls / 60 turns.
* MV keeps the paper's main configuration B_mid = (3 rounds, 6 calls, 30 new) at C6; its other
  points keep B_step = 3 (never binding before the call cap except at C9, where it is exactly
  the three rounds the calls allow).
* C5, C7, C8 are not in Table 16; they follow the same rules (B_new = 50 from C7 on) and are
  marked ``paper=None`` in :data:`PAPER_TABLE16`.

``bfr sweep`` measures the calls and set sizes each point realizes on a store, and
bench/quality/bench_method.py compares them with Table 16. This module only declares the budgets.

Does not cover: the state-conditioned controllers (BFR-State / BFR-Adaptive) of Table 18.
"""

from __future__ import annotations

from bfr_core.arm_names import CONV_FUSION, canonical_arm
from bfr_core.config import Budget
from bfr_core.errors import BfrError

CALL_DEPTH = 12  # unseen records one completion call asks its view for (MV C1: 11.91 new per call)
TEXT_KEEP = 8  # Section 4.4: BFR-Text keeps the first k_keep = 8 unseen hits per round
MV_KEEP = 20  # Table 16 MV C2/C3 plateau (19.05 / 19.84 new in one round)
NAMES = tuple(f"C{i}" for i in range(10))

STAGE_ONE_ONLY = Budget(rounds=0, calls=0, new=0, keep=0)  # C0: FCA-MS alone


def _new_cap(n: int) -> int:
    return 30 if n <= 6 else 50  # B_mid's 30; C9 realizes 59.23 turns, so the large points allow 50


def _text(n: int) -> Budget:
    return STAGE_ONE_ONLY if n == 0 else Budget(rounds=n, calls=n, new=_new_cap(n), keep=TEXT_KEEP)


def _mv(n: int) -> Budget:
    return STAGE_ONE_ONLY if n == 0 else Budget(rounds=min(n, 3), calls=n, new=_new_cap(n), keep=MV_KEEP)


GRID: dict[str, dict[str, Budget]] = {
    "text": {f"C{n}": _text(n) for n in range(10)},
    "mv": {f"C{n}": _mv(n) for n in range(10)},
}

# Which grid an arm reads; arms without completion read the MV grid (its C6 is B_mid) so that a
# single --budget flag over mixed arms never fails.
ARM_GRID: dict[str, str] = {"bfr-text": "text", "bfr-mv": "mv", CONV_FUSION: "mv", "fca-ms": "mv"}

# Table 16 (LoCoMo pilot, n=200): (realized mean calls, realized mean set size); None = not reported.
PAPER_TABLE16: dict[str, dict[str, tuple[float, float] | None]] = {
    "bfr-text": {"C0": (0.00, 10.00), "C1": (1.00, 18.00), "C2": (2.00, 26.00), "C3": (3.00, 34.00),
                 "C4": (4.00, 40.00), "C5": None, "C6": (4.00, 40.00), "C7": None, "C8": None,
                 "C9": None},
    "bfr-mv": {"C0": (0.00, 10.00), "C1": (1.00, 21.91), "C2": (2.00, 29.05), "C3": (3.00, 29.84),
               "C4": (4.00, 39.72), "C5": None, "C6": (5.99, 39.88), "C7": None, "C8": None,
               "C9": (8.98, 59.23)},
}


def budget_for(arm: str, name: str) -> Budget:
    """The budget an arm runs at grid point ``name`` ("C0".."C9"; case-insensitive)."""
    key = name.strip().upper()
    if key not in NAMES:
        raise BfrError(f"unknown budget '{name}'; choose one of {', '.join(NAMES)}")
    return GRID[ARM_GRID.get(canonical_arm(arm), "mv")][key]
