"""The run status line: counters, spend (or "price unknown") and the ETA from the rate so far."""

from __future__ import annotations


def test_run_status_line_and_eta():
    from bfr_core.progress import RunStatus

    st = RunStatus(done=10, total=40, elapsed_s=20.0, calls=50, cached=5, failed=1, tokens_in=12_345,
                   tokens_out=678, cost_usd=0.4321)
    assert st.eta_s == 60.0
    assert st.line() == "calls 50 (cached 5, failed 1) tokens 12.3k/678 $0.43 eta 1m00s"
    assert RunStatus(0, 5, 0.0, cost_usd=None).line().endswith("price unknown eta ?")
