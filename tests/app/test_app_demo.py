"""Demo page: one click replays the camera-strap (shutter-release analogue) case."""

from conftest import app_test, texts


def test_run_all_ends_with_both_evidence_turns_held(app_db):
    at = app_test().run()
    at.switch_page("pages/demo.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert "camera strap" in texts(at)
    at.button(key="demo_all").click().run()
    assert not at.exception, [e.value for e in at.exception]
    body = texts(at)
    # top-k holds the order but misses the arrival
    assert "holds **1 of 2** gold turns" in body
    assert any("showed up on March 14th" in e.value for e in at.error)
    # BFR-MV ends with both gold turns in its final evidence set
    assert any("holds 2 of 2 gold turns" in s.value for s in at.success)
    # the offline rules answerer computes the interval from both turns
    assert any(m.value.startswith("### 11 days") for m in at.markdown), body
    assert "offline rules" in body


def test_next_step_on_the_demo(app_db):
    at = app_test().run()
    at.switch_page("pages/demo.py").run()
    at.button(key="demo_next").click().run()
    assert [h.value for h in at.subheader][0].startswith("1.")
    assert not any(h.value.startswith("3 ·") for h in at.header)
