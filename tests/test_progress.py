"""bfr_core.progress: the run status line (counters, spend or "price unknown", the ETA from the rate so
far), ETA formatting, the recording callback, and ticking during one long step."""

from __future__ import annotations

import time

import pytest

from bfr_core.progress import Recorder, eta_seconds, fmt_eta, ticking


def test_run_status_line_and_eta():
    from bfr_core.progress import RunStatus

    st = RunStatus(done=10, total=40, elapsed_s=20.0, calls=50, cached=5, failed=1, tokens_in=12_345,
                   tokens_out=678, cost_usd=0.4321)
    assert st.eta_s == 60.0
    assert st.line() == "calls 50 (cached 5, failed 1) tokens 12.3k/678 $0.43 eta 1m00s"
    assert RunStatus(0, 5, 0.0, cost_usd=None).line().endswith("price unknown eta ?")



def test_eta_and_its_text():
    assert eta_seconds(10.0, 25, 100) == pytest.approx(30.0)
    assert eta_seconds(0.0, 0, 100) is None and eta_seconds(5.0, 0, 100) is None
    assert fmt_eta(80.4) == "about 1 min 20 s left" and fmt_eta(7) == "about 7 s left" and fmt_eta(None) == ""


def test_recorder_keeps_updates_and_the_longest_gap():
    t = iter([0.0, 1.0, 4.0, 4.5])
    rec = Recorder(clock=lambda: next(t))
    rec(1, 3, "a")
    rec(2, 3, "a")
    rec(3, 3, "b")
    assert [u[1:] for u in rec.updates] == [(1, 3, "a"), (2, 3, "a"), (3, 3, "b")]
    assert rec.max_gap() == 3.0 and rec.max_gap(until=10.0) == 5.5


def test_ticking_reports_while_the_step_runs_and_returns_its_value():
    rec = Recorder()
    assert ticking(lambda: time.sleep(0.35) or 7, rec, "writing", every=0.1) == 7
    assert len(rec.updates) >= 3 and rec.updates[-1][1:] == (1, 1, "writing")


def test_ticking_waits_for_the_step_when_the_callback_cancels():
    done = []

    class Cancel(BaseException):
        pass

    def cb(d, t, label):
        raise Cancel

    with pytest.raises(Cancel):
        ticking(lambda: time.sleep(0.2) or done.append(1), cb, "writing", every=0.05)
    assert done == [1]  # the step finished before the cancel went on (a transaction is never cut)


def test_ticking_reraises_the_steps_error():
    def boom():
        raise ValueError("bad")

    with pytest.raises(ValueError, match="bad"):
        ticking(boom, Recorder(), "x", every=0.01)


def test_ticking_shows_the_meters_count_and_stops_the_step_on_cancel():
    from bfr_core.progress import StepMeter, StepStopped

    meter = StepMeter(total=1000)
    seen: list[int] = []

    class Cancel(BaseException):
        pass

    def cb(d, t, label):
        seen.append(d)
        if d >= 50:
            raise Cancel

    stopped = []

    def step():
        try:
            for _ in range(1000):
                time.sleep(0.002)
                meter.advance()
        except StepStopped:
            stopped.append(meter.done)
            raise

    with pytest.raises(Cancel):
        ticking(step, cb, "parsing", every=0.02, meter=meter)
    assert seen[-1] >= 50 and len(set(seen)) > 2  # the bar moved with the count
    assert stopped and stopped[0] < 1000  # the step ended early instead of being waited out


def test_ticking_with_a_meter_ends_full():
    from bfr_core.progress import StepMeter

    meter = StepMeter(total=3)
    rec = Recorder()
    ticking(lambda: [meter.advance() for _ in range(3)], rec, "x", every=0.01, meter=meter)
    assert rec.updates[-1][1:] == (3, 3, "x")


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_pace_measures_each_part_and_weighs_the_rest_by_the_speed_so_far():
    from bfr_core.progress import Pace

    clock = FakeClock()
    # priors say part a costs 1 s a unit and b 2 s a unit; the machine runs at half that speed
    pace = Pace({"a": 10, "b": 5, "empty": 0}, {"a": 1.0, "b": 2.0, "empty": 9.0}, clock=clock)
    assert pace.seconds_left() == pytest.approx(20.0)  # nothing measured: the priors as they are
    pace.begin("a")
    clock.now = 8.0
    pace.add("a", 4)  # 2 s a unit measured: speed 2x the prior's
    assert pace.seconds_left() == pytest.approx(6 * 2.0 + 5 * 2.0 * 2)
    count = pace.count()
    assert eta_seconds(8.0, count, Pace.SCALE) == pytest.approx(32.0, rel=1e-3)  # the ETA is the estimate
    pace.end("a")
    pace.begin("b")
    clock.now = 18.0
    pace.add("b", 2)  # b measured on its own: 5 s a unit, the prior no longer counts; a is done
    assert pace.seconds_left() == pytest.approx(3 * 5.0)


def test_pace_trusts_a_parts_own_rate_only_after_a_share_of_it_is_done():
    from bfr_core.progress import Pace

    clock = FakeClock()
    pace = Pace({"a": 100}, {"a": 1.0}, clock=clock)
    pace.begin("a")
    clock.now = 50.0
    pace.add("a", 1)  # one slow first unit (1 % of the part): its 50 s a unit is not the part's rate
    assert pace.seconds_left() == pytest.approx(100 * 1.0 - 50.0)  # the prior, less the time run
    pace.add("a", 19)  # 20 % done in 50 s: now its own rate, 2.5 s a unit
    assert pace.seconds_left() == pytest.approx(80 * 2.5)


def test_a_part_may_end_at_a_time_already_past():
    from bfr_core.progress import Pace

    clock = FakeClock()
    pace = Pace({"load": 1, "b": 10}, {"load": 5.0, "b": 1.0}, clock=clock)
    pace.begin("load")
    clock.now = 30.0  # seen only now, but the load ended at 5 s: 5 s spent, at its prior's speed
    pace.end("load", at=5.0)
    assert pace.spent["load"] == 5.0 and pace.seconds_left() == pytest.approx(10 * 1.0)


def test_a_part_sets_the_others_speed_only_after_it_has_run_a_while():
    from bfr_core.progress import Pace

    clock = FakeClock()
    pace = Pace({"short": 10, "long": 100}, {"short": 0.05, "long": 1.0}, clock=clock)
    pace.begin("short")
    clock.now = 3.0
    pace.add("short", 10)  # 6x its prior, but 3 s: fixed costs, not the machine's speed
    pace.end("short")
    assert pace.seconds_left() == pytest.approx(100 * 1.0)
    pace2 = Pace({"short": 100, "long": 100}, {"short": 0.05, "long": 1.0}, clock=clock)
    pace2.begin("short")
    clock.now = 3.0 + Pace.SPEED_MIN_S * 2
    pace2.add("short", 100)  # 10 s for a 5 s prior: the machine runs at half speed
    assert pace2.seconds_left() == pytest.approx(100 * 1.0 * 2)


def test_a_stopped_parts_clock_stops_and_it_may_begin_again():
    from bfr_core.progress import Pace

    clock = FakeClock()
    pace = Pace({"a": 10, "b": 10}, {"a": 1.0, "b": 1.0}, clock=clock)
    pace.begin("a")
    clock.now = 5.0
    pace.add("a", 5)
    pace.stop("a")
    clock.now = 50.0  # a's 5 s stay 5 s while it waits: its rate, 1 s a unit, sets b's speed too
    assert pace.seconds_left() == pytest.approx(5 * 1.0 + 10 * 1.0)
    pace.begin("a")
    clock.now = 60.0
    pace.add("a", 5)  # 10 more seconds for the rest of a
    assert pace.spent["a"] == 5.0 and pace.seconds_left() == pytest.approx(10 * 1.5)


def test_pace_counts_never_go_back_and_stop_short_of_full():
    from bfr_core.progress import Pace

    clock = FakeClock()
    pace = Pace({"load": 1}, {"load": 10.0}, clock=clock)
    pace.begin("load")
    clock.now = 5.0
    first = pace.count()
    assert first == Pace.SCALE // 2  # an unmeasured part runs down its prior as it goes
    clock.now = 30.0  # longer than its prior: nothing left by the estimate, yet never "done"
    assert pace.count() == Pace.SCALE - 1
    pace.end("load")
    assert pace.seconds_left() == 0.0 and pace.count() == Pace.SCALE - 1


def test_a_prior_replaced_midway_reprices_what_is_not_measured_yet():
    from bfr_core.progress import Pace

    priors = {"a": 1.0}
    pace = Pace({"a": 10}, priors, clock=FakeClock())
    pace.set_prior("a", 0.5)  # a machine found faster than the prior said
    assert pace.seconds_left() == pytest.approx(5.0) and priors == {"a": 1.0}  # the caller's dict untouched


def test_a_calibrated_prior_is_not_scaled_by_the_others_speed_nor_sets_it():
    from bfr_core.progress import Pace

    clock = FakeClock()
    pace = Pace({"static": 100, "minilm": 100, "load": 1}, {"static": 1.0, "minilm": 1.0, "load": 4.0},
                clock=clock, calibrated=("minilm",))
    pace.begin("static")
    clock.now = 50.0
    pace.add("static", 100)  # twice as fast as its prior
    pace.end("static")
    # the load (a reference prior) runs at the measured speed; MiniLM's calibrated prior stays as it is
    assert pace.seconds_left() == pytest.approx(100 * 1.0 + 4.0 * 0.5)
    later = Pace({"minilm": 100, "static": 100}, {"minilm": 1.0, "static": 1.0}, clock=clock)
    later.set_prior("minilm", 0.25)  # calibrated midway
    later.begin("minilm")
    clock.now += 3 * Pace.SPEED_MIN_S
    later.add("minilm", 50)  # its own rate, 0.3 s a unit, prices its rest; it says nothing of static's
    assert later.seconds_left() == pytest.approx(50 * 0.3 + 100 * 1.0)
