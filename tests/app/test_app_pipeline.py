"""The pages with the real arms (index, stage1/stage2, baselines): every step kind renders.

The demo's story is asserted with the real arms: top-k (mem0) holds the order but not the arrival,
BFR-MV ends holding both, and the offline-rules answer on its set is the reference's "11 days".
"""

import pytest
from conftest import app_test, texts

from bfr_core.pipeline import arm_names


@pytest.mark.parametrize("arm", [a for a in ("mem0", "amem", "fca-ms", "bfr-text", "bfr-mv") if a in arm_names()])
def test_trace_run_all_with_real_arm(real_db, arm):
    at = app_test().run()
    at.switch_page("pages/trace.py").run()
    at.selectbox(key="trace_question").select("q1").run()
    at.selectbox(key="trace_arm").select(arm).run()
    at.button(key="trace_all").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert any(h.value.startswith("Final evidence set") for h in at.subheader)


def test_demo_run_all_with_real_arms(real_db):
    at = app_test().run()
    at.switch_page("pages/demo.py").run()
    at.button(key="demo_all").click().run()
    assert not at.exception, [e.value for e in at.exception]
    body = texts(at)
    assert "holds **1 of 2** gold turns" in body  # the BM25 trap of the demo dataset
    assert any("holds 2 of 2 gold turns" in s.value for s in at.success), body  # BFR-MV reaches both
    assert any(m.value.startswith("### 11 days") for m in at.markdown), body
