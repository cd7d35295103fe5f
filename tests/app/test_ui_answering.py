"""ui.answering: the answer and the judge's label with its reason, as Demo and Trace show them."""

from bfr_core.config import LLMConfig
from bfr_core.llm import make_llm
from bfr_core.records import Question, Turn
from bfr_core.store import Store
from ui.answering import Answered, answer_and_judge, verdict_text

SHUTTER = "How many days did it take for me to receive the new remote shutter release after I ordered it?"


def test_offline_judge_says_correct_with_its_reason_on_the_issue_18_gold():
    q = Question("d", "q1", "s", SHUTTER, "5 days. 6 days (including the last day) is also acceptable.",
                 "temporal")
    turns = [Turn("t1", "s1", 0, "user", "I ordered a new remote shutter release online on February 5th"),
             Turn("t2", "s1", 1, "user", "it arrived on February 10th")]
    got = answer_and_judge(make_llm(LLMConfig(), Store()), q, turns, "offline rules")
    assert got.answer == "5 days" and got.judge == "CORRECT" and got.judge_reason
    assert verdict_text(got).startswith("CORRECT (") and got.judge_reason in verdict_text(got)


def test_verdict_text_names_undecided_offline():
    assert verdict_text(Answered("x", "UNDECIDED", "offline rules", judge_reason="Undecided offline: ...")) == (
        "undecided offline (Undecided offline: ...)")
    assert verdict_text(Answered("x", None, "p")) == "not judged"


def test_an_adversarial_question_has_no_reference_and_its_trap_answer_is_wrong():
    """LoCoMo's category 5 stores the trap as the answer: quoting it must not be judged CORRECT."""
    from ui.answering import reference_text

    q = Question("d", "q5", "s", "What did Mia paint at dawn?", "a sunrise", "adversarial", (), category=5)
    turns = [Turn("t1", "s1", 0, "Ana", "I painted a sunrise at dawn.")]
    got = answer_and_judge(make_llm(LLMConfig(), Store()), q, turns, "offline rules")
    assert "sunrise" in got.answer and got.judge == "WRONG" and "adversarial rule" in got.judge_reason
    assert reference_text(q).startswith("none: the conversation does not say") and "a sunrise" in reference_text(q)
    plain = Question("d", "q1", "s", "What did Ana paint?", "a sunrise", "single-hop", ("t1",), category=4)
    assert reference_text(plain) == "a sunrise"
