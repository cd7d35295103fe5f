"""bfr_core.dates and bfr_core.lexicon: outputs pinned to what the functions gave before they were
merged into these modules (from requirements.py, ingest/common.py and llm/rules.py, 2026-12-01), so
the move changed no behaviour; plus the rules each says it follows."""

from __future__ import annotations

import json

import pytest

from bfr_core import dates, lexicon
from bfr_core.llm import rules, rules_tokens
from bfr_core.method import requirements

PINNED = json.loads(r'''{"find_dates": {"I ordered it on February 5th and it arrived on Feb. 10th, 2023.": [[16, [null, 2, 5], "February 5th"], [47, [2023, 2, 10], "Feb. 10th, 2023"]], "On 3 March 2024 we met; then 2023-05-07.": [[3, [2024, 3, 3], "3 March 2024"], [29, [2023, 5, 7], "2023-05-07"]], "the 14th of March": [[4, [null, 3, 14], "14th of March"]], "May 2023 was great": [], "in June I moved; during October 2022 too": [], "March 16, 2022 and 19 August, 2023": [[0, [2022, 3, 16], "March 16, 2022"], [19, [2023, 8, 19], "19 August, 2023"]], "No dates here": [], "sept 31 is not a date": [], "Dec 25 2020 and jan 1": [[0, [2020, 12, 25], "Dec 25 2020"], [16, [null, 1, 1], "jan 1"]], "2021": [], "the first weekend of October 2023": []}, "parse_dates": {"I ordered it on February 5th and it arrived on Feb. 10th, 2023.": [["2023", [2023, null, null]], ["on February", [null, 2, null]]], "On 3 March 2024 we met; then 2023-05-07.": [["3 March 2024", [2024, 3, 3]], ["2023", [2023, null, null]]], "the 14th of March": [["of March", [null, 3, null]]], "May 2023 was great": [["May 2023", [2023, 5, null]]], "in June I moved; during October 2022 too": [["October 2022", [2022, 10, null]], ["in June", [null, 6, null]]], "March 16, 2022 and 19 August, 2023": [["March 16, 2022", [2022, 3, 16]], ["19 August, 2023", [2023, 8, 19]]], "No dates here": [], "sept 31 is not a date": [], "Dec 25 2020 and jan 1": [["2020", [2020, null, null]]], "2021": [["2021", [2021, null, null]]], "the first weekend of October 2023": [["October 2023", [2023, 10, null]]], "How many days did it take for me to receive the remote after I ordered it?": [], "How long did Jon take to open his studio?": [], "How many weeks passed between the two adoptions?": [], "How many dogs does Audrey have?": [], "How many days ago did I buy it?": [], "When did Caroline go to the LGBTQ support group?": [], "How much time between the wedding and the trip?": [], "how many months since I started?": []}, "day_gap": [[[2023, 2, 5], [2023, 2, 10], 5], [[null, 12, 28], [null, 1, 3], 6], [[2020, 2, 1], [null, 3, 1], 29], [[null, 3, 1], [2021, 2, 1], -28]], "span_text": [[0, "day", "0 days"], [0, "week", "0 weeks"], [0, "month", "0 months"], [0, "year", "0 years"], [1, "day", "1 day"], [1, "week", "0 weeks"], [1, "month", "0 months"], [1, "year", "0 years"], [5, "day", "5 days"], [5, "week", "1 week"], [5, "month", "0 months"], [5, "year", "0 years"], [6, "day", "6 days"], [6, "week", "1 week"], [6, "month", "0 months"], [6, "year", "0 years"], [7, "day", "7 days"], [7, "week", "1 week"], [7, "month", "0 months"], [7, "year", "0 years"], [11, "day", "11 days"], [11, "week", "2 weeks"], [11, "month", "0 months"], [11, "year", "0 years"], [30, "day", "30 days"], [30, "week", "4 weeks"], [30, "month", "1 month"], [30, "year", "0 years"], [45, "day", "45 days"], [45, "week", "6 weeks"], [45, "month", "1 month"], [45, "year", "0 years"], [364, "day", "364 days"], [364, "week", "52 weeks"], [364, "month", "12 months"], [364, "year", "1 year"], [400, "day", "400 days"], [400, "week", "57 weeks"], [400, "month", "13 months"], [400, "year", "1 year"]], "locomo": {"1:56 pm on 8 May, 2023": "2023-05-08 13:56:00", "10:04 am on 19 Aug, 2023": "2023-08-19 10:04:00", "13:00 pm on 1 May, 2023": "None", "x": "None"}, "lme": {"2023/05/20 (Sat) 02:21": "2023-05-20 02:21:00", "2023/3/1": "2023-03-01 00:00:00", "2023/02/30": "None", "bad": "None"}, "iso": {"2023-05-20": "2023-05-20 00:00:00", "2023-05-20T10:00:00+02:00": "2023-05-20 08:00:00", "nope": "None"}, "patterns": {"How many days did it take for me to receive the remote after I ordered it?": [true, true, true, true, true], "How long did Jon take to open his studio?": [true, false, true, true, true], "How many weeks passed between the two adoptions?": [true, true, true, true, true], "How many dogs does Audrey have?": [false, false, false, false, true], "How many days ago did I buy it?": [true, false, true, true, true], "When did Caroline go to the LGBTQ support group?": [false, false, true, false, false], "How much time between the wedding and the trip?": [false, false, true, false, true], "how many months since I started?": [true, true, true, true, true]}, "toks": {"I ordered it on February 5th and it arrived on Feb. 10th, 2023.": ["10", "2023", "5", "feb", "februari", "order", "receiv"], "On 3 March 2024 we met; then 2023-05-07.": ["05", "07", "2023", "2024", "3", "march", "met"], "the 14th of March": ["14", "march"], "How many days did it take for me to receive the remote after I ordered it?": ["day", "mani", "order", "receiv", "remot", "take"], "How long did Jon take to open his studio?": ["jon", "long", "open", "studio", "take"], "How many weeks passed between the two adoptions?": ["2", "adopt", "mani", "pass", "week"]}, "numbers": {"I ordered it on February 5th and it arrived on Feb. 10th, 2023.": [5, 10], "On 3 March 2024 we met; then 2023-05-07.": [3, 5, 2023, 2024], "the 14th of March": [14], "May 2023 was great": [2023], "in June I moved; during October 2022 too": [2022], "March 16, 2022 and 19 August, 2023": [16, 19, 2022, 2023], "No dates here": [], "sept 31 is not a date": [31], "Dec 25 2020 and jan 1": [1, 25, 2020], "2021": [2021], "the first weekend of October 2023": [2023], "twice a week, a couple of times": [2], "three of the 12 dogs": [3, 12]}, "person_names": {"How many days did it take for me to receive the remote after I ordered it?": [], "How long did Jon take to open his studio?": ["Jon"], "How many weeks passed between the two adoptions?": [], "How many dogs does Audrey have?": ["Audrey"], "How many days ago did I buy it?": [], "When did Caroline go to the LGBTQ support group?": ["Caroline"], "How much time between the wedding and the trip?": [], "how many months since I started?": [], "Did Melanie and Caroline meet in May?": ["Melanie", "Caroline"]}, "name_spans": {"How many days did it take for me to receive the remote after I ordered it?": [], "How long did Jon take to open his studio?": ["Jon"], "How many weeks passed between the two adoptions?": [], "How many dogs does Audrey have?": ["Audrey"], "How many days ago did I buy it?": [], "When did Caroline go to the LGBTQ support group?": ["Caroline"], "How much time between the wedding and the trip?": [], "how many months since I started?": [], "Did Melanie and Caroline meet in May?": ["Melanie", "Caroline"], "What did John's sister say on Monday?": ["John"]}}''')


def _j(x):
    return json.loads(json.dumps(x, default=str))


@pytest.mark.parametrize("text", list(PINNED["find_dates"]))
def test_find_day_dates_is_pinned(text):
    assert _j(dates.find_day_dates(text)) == PINNED["find_dates"][text]


@pytest.mark.parametrize("text", list(PINNED["parse_dates"]))
def test_find_date_constraints_is_pinned(text):
    assert _j(dates.find_date_constraints(text)) == PINNED["parse_dates"][text]


def test_day_gap_and_span_text_are_pinned():
    for a, b, gap in PINNED["day_gap"]:
        assert dates.day_gap(tuple(a), tuple(b)) == gap
    for days, unit, text in PINNED["span_text"]:
        assert dates.span_text(days, unit) == text


def test_session_date_parsers_are_pinned():
    for name, fn in (("locomo", dates.parse_locomo_date), ("lme", dates.parse_lme_date), ("iso", dates.parse_iso_date)):
        for text, want in PINNED[name].items():
            assert str(fn(text)) == want


@pytest.mark.parametrize("question", list(PINNED["patterns"]))
def test_question_patterns_are_pinned(question):
    got = [bool(dates.TIME_SPAN_QUESTION.search(question)), bool(dates.SPAN_BETWEEN_EVENTS.search(question)),
           bool(dates.INTERVAL_QUESTION.search(question)), bool(dates.SPAN_UNIT.search(question)),
           bool(dates.DURATION_QUESTION.match(question))]
    assert got == PINNED["patterns"][question]


def test_token_number_and_name_helpers_are_pinned():
    for text, want in PINNED["toks"].items():
        assert sorted(rules_tokens.toks(text)) == want
    for text, want in PINNED["numbers"].items():
        assert sorted(rules_tokens.numbers(text)) == want
    for q, want in PINNED["person_names"].items():
        assert rules.person_names(q) == want
    for q, want in PINNED["name_spans"].items():
        assert requirements.name_spans(q) == want


def test_the_two_month_lengths_say_what_they_are_for():
    assert dates.span_text(61, "month") == "2 months"  # a measured gap: 30.44-day months
    assert dates.WINDOW_UNIT_DAYS["month"] == 30 and dates.MEAN_UNIT_DAYS["month"] == 30.44


def test_related_stems_are_symmetric_and_canonical_stems_fold_onto_one():
    for stem, group in lexicon.RELATED_STEMS.items():
        assert stem in group and all(stem in lexicon.RELATED_STEMS[o] for o in group)
    assert lexicon.CANONICAL_STEM["arriv"] == lexicon.CANONICAL_STEM["deliv"] == "receiv"
    assert "may" in lexicon.NOT_NAME_WORDS and "May" in lexicon.NOT_NAME_CAPITALISED
