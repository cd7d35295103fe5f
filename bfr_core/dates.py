"""Every date rule in one place: month names, parsing stored and written dates, day gaps, unit
lengths, and the question patterns that ask for a time span.

Covers:
* the calendar words (:data:`MONTH_NAMES`, :data:`MONTH_NUMBER` with three-letter forms, :data:`WEEKDAYS`);
* parsing the session dates of the benchmark files (:func:`parse_locomo_date`, :func:`parse_lme_date`,
  :func:`parse_iso_date`, BEAM's :func:`parse_beam_date`): each returns a naive ``datetime`` or None;
* LoCoMo-Plus's time gaps (:func:`gap_days`, the benchmark's ``parse_time_gap``: "two weeks later" -> 14);
* two readings of dates written in text, which really differ and so keep two names:
  :func:`find_day_dates` (dates that name a day, "February 5th", "3 March 2024", "2023-05-07"; the year
  may be missing) for subtracting event dates, and :func:`find_date_constraints` (partial constraints a
  question names, "May 2023", "in June", "2022") for matching sessions;
* :func:`day_gap` and :func:`span_text` ("5 days", "2 weeks") with :data:`MEAN_UNIT_DAYS` (a month of
  30.44 days: converting a measured gap), beside :data:`WINDOW_UNIT_DAYS` (a month of 30 days: the
  width of a "two months ago" window);
* the question patterns: :data:`TIME_SPAN_QUESTION` ("how long", "how many days / weeks ..."),
  :data:`SPAN_BETWEEN_EVENTS` (the time between two events, not "... ago"), :data:`INTERVAL_QUESTION`
  (the offline rules' wider reading, "when" included), :data:`SPAN_UNIT` (the unit asked) and
  :data:`DURATION_QUESTION` ("how many / much / long ..." at the start).

* the session-date windows a question points at (:func:`date_windows`: a named day, month or year,
  widened forward because conversations report events late; "two weeks ago", "last weekend" from
  the question's own date) and :func:`in_windows` (which turns' sessions fall in them);
* :func:`has_time_mention`: whether a record states when (a date, a year, "last Friday", "yesterday").

Does not cover: time zones (the store is naive).
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta

import numpy as np

MONTH_NAMES = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
               "october", "november", "december")
MONTH_NUMBER: dict[str, int] = ({m: i + 1 for i, m in enumerate(MONTH_NAMES)}
                                | {m[:3]: i + 1 for i, m in enumerate(MONTH_NAMES)})
UNDATED = "undated"  # what an evidence snippet says in place of a missing session date ("(undated) Ana: ...")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")

Ymd = tuple[int | None, int, int]  # a day date; the year may be unknown
Constraint = tuple[int | None, int | None, int | None]  # (year, month, day), any part unknown

# -- session dates of the benchmark files ---------------------------------------------------------
_LOCOMO_DATE = re.compile(
    r"^\s*(\d{1,2}):(\d{2})\s*([ap])\.?m\.?\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*$", re.IGNORECASE
)
_LME_DATE = re.compile(r"^\s*(\d{4})/(\d{1,2})/(\d{1,2})\s*(?:\([A-Za-z]+\))?\s*(?:(\d{1,2}):(\d{2}))?\s*$")


def parse_locomo_date(text: str) -> datetime | None:
    """``"1:56 pm on 8 May, 2023"`` -> ``datetime(2023, 5, 8, 13, 56)``; None if it does not parse."""
    m = _LOCOMO_DATE.match(text)
    if not m:
        return None
    hour, minute, ampm, day, month_name, year = m.groups()
    month = MONTH_NUMBER.get(month_name.lower())
    h = int(hour) % 12 + (12 if ampm.lower() == "p" else 0)
    if month is None or int(hour) > 12:
        return None
    try:
        return datetime(int(year), month, int(day), h, int(minute))
    except ValueError:
        return None


def parse_lme_date(text: str) -> datetime | None:
    """``"2023/05/20 (Sat) 02:21"`` -> ``datetime(2023, 5, 20, 2, 21)``; None if it does not parse."""
    m = _LME_DATE.match(text)
    if not m:
        return None
    y, mo, d, h, mi = m.groups()
    try:
        return datetime(int(y), int(mo), int(d), int(h or 0), int(mi or 0))
    except ValueError:
        return None


# a calendar date first (YYYY-MM-DD): Python also reads week dates (2024-W10-1) and ordinal or basic
# forms, which no benchmark writes and which a typo produces as easily
_ISO_CALENDAR_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ].*)?", re.S)
ISO_DATE_FORMS = "YYYY-MM-DD, optionally THH:MM[:SS] and an offset, in years 1-9999 once in UTC"


def parse_iso_date(text: str) -> datetime | None:
    """ISO 8601 calendar date or date-time; an offset is converted to UTC and dropped (the store is
    naive). None for anything else, week dates and dates whose UTC time leaves years 1-9999 included."""
    text = text.strip()
    if not _ISO_CALENDAR_DATE.fullmatch(text):
        return None
    try:
        value = datetime.fromisoformat(text)
        if value.tzinfo is not None:
            value = value.astimezone(UTC).replace(tzinfo=None)
    except (ValueError, OverflowError):
        return None
    return value


_BEAM_DATE = re.compile(r"^\s*([A-Za-z]+)-(\d{1,2})-(\d{4})\s*$")


def parse_beam_date(text: str) -> datetime | None:
    """BEAM's time anchor ``"March-15-2024"`` -> ``datetime(2024, 3, 15)``; None if it does not parse."""
    m = _BEAM_DATE.match(text)
    month = MONTH_NUMBER.get(m.group(1).lower()) if m else None
    if m is None or month is None:
        return None
    try:
        return datetime(int(m.group(3)), month, int(m.group(2)))
    except ValueError:
        return None


# LoCoMo-Plus's ``parse_time_gap`` (data/build_conv.py of xjtuleeyf/Locomo-Plus), same regex and units.
_GAP_WORD = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
             "ten": 10, "eleven": 11, "twelve": 12, "a": 1, "an": 1}
_GAP = re.compile(r"\b(\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a|an)\b\s*"
                  r"(week|weeks|month|months|year|years)\b")
GAP_UNIT_DAYS = {"week": 7, "month": 30, "year": 365}


def gap_days(text: str) -> int:
    """``"about three weeks later"`` -> 21 (weeks 7 days, months 30, years 365; "a"/"an" = 1); 0 when
    no count and unit are found (``"several months later"``), as the benchmark's construction does."""
    m = _GAP.search(text.lower().strip())
    if not m:
        return 0
    num, unit = m.groups()
    count = int(num) if num.isdigit() else _GAP_WORD[num]
    return count * GAP_UNIT_DAYS[unit.rstrip("s")]


# -- dates written in text ------------------------------------------------------------------------
_MON = (r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?"
        r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
DAY_DATE_PATTERNS = (
    (re.compile(rf"\b{_MON}\s+{_DAY}\b(?:,?\s+(\d{{4}}))?", re.I), "mdy"),
    (re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MON}\b(?:,?\s+(\d{{4}}))?", re.I), "dmy"),
    (re.compile(r"\b(\d{4})[-/](\d{1,2})[-/](\d{1,2})\b"), "iso"),
)


def find_day_dates(text: str) -> list[tuple[int, Ymd, str]]:
    """(position, (year or None, month, day), matched text) for every date naming a day in ``text``."""
    found: list[tuple[int, Ymd, str]] = []
    for pat, kind in DAY_DATE_PATTERNS:
        for m in pat.finditer(text):
            g = m.groups()
            try:
                if kind == "mdy":
                    ymd = (int(g[2]) if g[2] else None, MONTH_NUMBER[g[0].lower().rstrip(".")[:3]], int(g[1]))
                elif kind == "dmy":
                    ymd = (int(g[2]) if g[2] else None, MONTH_NUMBER[g[1].lower().rstrip(".")[:3]], int(g[0]))
                else:
                    ymd = (int(g[0]), int(g[1]), int(g[2]))
                date(ymd[0] or 2000, ymd[1], ymd[2])  # validates month/day
            except (KeyError, ValueError):
                continue
            if not any(abs(p - m.start()) < 3 for p, _, _ in found):
                found.append((m.start(), ymd, m.group(0)))
    return sorted(found)


_YEAR = r"(?:19|20)\d\d"
_MONTH_RE = r"(?:" + "|".join(m.capitalize() for m in MONTH_NAMES) + r"|" + "|".join(MONTH_NAMES) + r")"
CONSTRAINT_PATTERNS = (
    # "March 16, 2022", "October 3, 2023"
    re.compile(rf"\b(?P<month>{_MONTH_RE})\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<year>{_YEAR})\b"),
    # "19 August, 2023", "7 May 2023"
    re.compile(rf"\b(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\s+(?P<month>{_MONTH_RE}),?\s+(?P<year>{_YEAR})\b"),
    re.compile(rf"\b(?P<month>{_MONTH_RE}),?\s+(?P<year>{_YEAR})\b"),  # "May 2023"
    re.compile(rf"\b(?P<year>{_YEAR})\b"),
    re.compile(rf"\b(?:in|during|on|of)\s+(?P<month>{_MONTH_RE})\b"),  # "in June"
)


def find_date_constraints(text: str) -> list[tuple[str, Constraint]]:
    """Date constraints written in a question: (matched text, (year, month, day)), any part None."""
    found: list[tuple[str, Constraint]] = []
    taken: list[tuple[int, int]] = []
    for pat in CONSTRAINT_PATTERNS:
        for m in pat.finditer(text):
            if any(a <= m.start() < b or a < m.end() <= b for a, b in taken):
                continue
            g = m.groupdict()
            year = int(g["year"]) if g.get("year") else None
            month = MONTH_NUMBER.get(g["month"].lower()) if g.get("month") else None
            day = int(g["day"]) if g.get("day") else None
            taken.append((m.start(), m.end()))
            found.append((m.group(0).strip(), (year, month, day)))
    return found


def date_matches(when: Constraint, value: datetime | None) -> bool:
    """Whether a session dated ``value`` meets a (year, month, day) constraint."""
    if value is None:
        return False
    year, month, day = when
    return ((year is None or value.year == year) and (month is None or value.month == month)
            and (day is None or value.day == day))


# -- gaps and units -------------------------------------------------------------------------------
MEAN_UNIT_DAYS = {"day": 1, "week": 7, "month": 30.44, "year": 365.25}  # a measured gap in the unit asked
WINDOW_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}  # the width of an "N months ago" window


def day_gap(a: Ymd, b: Ymd) -> int:
    """Days from ``a`` to ``b``; a missing year is taken as the other's (or one shared year), and a
    year-less later date that would fall before the earlier one is moved to the next year."""
    ya = a[0] or b[0] or 2001
    yb = b[0] or a[0] or 2001
    da, db = date(ya, a[1], a[2]), date(yb, b[1], b[2])
    if db < da and b[0] is None:
        db = date(yb + 1, b[1], b[2])
    return (db - da).days


def span_text(days: int, unit: str) -> str:
    """``days`` in ``unit`` (day / week / month / year), rounded: "5 days", "1 week"."""
    n = round(days / MEAN_UNIT_DAYS[unit])
    return f"{n} {unit}{'' if n == 1 else 's'}"


# -- questions that ask for a time span -----------------------------------------------------------
TIME_SPAN_QUESTION = re.compile(r"\bhow (long|many (seconds|minutes|hours|days|weeks|months|years))\b", re.I)
SPAN_BETWEEN_EVENTS = re.compile(r"\bhow many (day|week|month|year)s?\b(?!.*\bago\b).*"
                                 r"\b(between|after|before|since|take|took|passed|when|until)\b", re.I)
INTERVAL_QUESTION = re.compile(
    r"\b(how (many|much) (days?|weeks?|months?|years?|hours?|minutes?|time)|how long|when)\b", re.I)
SPAN_UNIT = re.compile(r"how (?:many|much) (day|week|month|year)s?|how long", re.I)
DURATION_QUESTION = re.compile(r"^\s*how\s+(?:many|much|long)\b(?P<rest>.*)$", re.IGNORECASE)


# -- session-date windows a question points at ----------------------------------------------------
DAY_SLACK = (3, 10)  # a named day: sessions from 3 days before to 10 days after it
MONTH_SLACK = 14  # a named month or year: sessions up to two weeks after its end
RELATIVE_COUNT = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
        "eight": 8, "nine": 9, "ten": 10, "few": 3, "couple": 2}
AGO = re.compile(r"\b(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|few|couple of)\s+"
                  r"(day|week|month|year)s?\s+ago\b", re.IGNORECASE)
LAST_UNIT = re.compile(r"\b(?:last|past|previous)\s+(week(?:end)?|month|year|monday|tuesday|wednesday|thursday|"
                   r"friday|saturday|sunday)\b|\byesterday\b", re.IGNORECASE)


# A record that says when something happened: a day date, a month or year, "three weeks ago", "last
# Friday", "yesterday", "this morning" (a "when" requirement is covered by one that also states the
# event; ``method.requirements``).
_TIME_WORDS = re.compile(r"\b(?:yesterday|today|tonight|tomorrow|this (?:morning|afternoon|evening|week(?:end)?|"
                         r"month|year)|next (?:week(?:end)?|month|year)|the other day|recently|last night|"
                         rf"(?:on|in|since|until) (?:{'|'.join(WEEKDAYS)}|{'|'.join(MONTH_NAMES)}))\b", re.I)


def has_time_mention(text: str) -> bool:
    """Whether ``text`` states a time: a day date, a year, a named month, a relative time."""
    return bool(find_day_dates(text) or AGO.search(text) or LAST_UNIT.search(text) or _TIME_WORDS.search(text)
                or re.search(rf"\b{_YEAR}\b", text))


def date_windows(text: str, qdate: datetime | None, years: Sequence[int]) -> list[tuple[datetime, datetime]]:
    """Session-date windows the question points at.

    Named dates (:func:`find_date_constraints`) widen forward by a slack because conversations report
    events late; a month without a year is tried in every year of ``years`` (the scope's session
    years). Relative times ("two weeks ago", "last weekend") need the question date.
    """
    out: list[tuple[datetime, datetime]] = []
    for _, (y, m, d) in find_date_constraints(text):
        if m is None and y is None:
            continue
        for yy in ([y] if y else sorted(set(years))):
            if m and d:
                try:
                    day = datetime(yy, m, d)
                except ValueError:
                    continue
                out.append((day - timedelta(days=DAY_SLACK[0]), day + timedelta(days=DAY_SLACK[1])))
            elif m:
                end = datetime(yy, m, calendar.monthrange(yy, m)[1], 23, 59)
                out.append((datetime(yy, m, 1), end + timedelta(days=MONTH_SLACK)))
            else:
                out.append((datetime(yy, 1, 1), datetime(yy, 12, 31, 23, 59) + timedelta(days=MONTH_SLACK)))
    if qdate is not None:
        for mt in AGO.finditer(text):
            word = mt.group(1).lower().split()[0]
            days = (int(word) if word.isdigit() else RELATIVE_COUNT.get(word, 1)) * WINDOW_UNIT_DAYS[mt.group(2).lower()]
            slack = timedelta(days=max(2, days // 4))
            centre = qdate - timedelta(days=days)
            out.append((centre - slack, centre + slack))
        for mt in LAST_UNIT.finditer(text):
            unit = (mt.group(1) or "").lower()
            days = {**WINDOW_UNIT_DAYS, "weekend": 7}.get(unit, 7 if unit else 1)
            out.append((qdate - timedelta(days=2 * days), qdate))
    return out


def in_windows(dates: Sequence[datetime | None], windows: Sequence[tuple[datetime, datetime]]) -> np.ndarray:
    """Per turn: its session date falls in a window. A window holding every turn says nothing."""
    if not windows:
        return np.zeros(len(dates), dtype=bool)
    mask = np.array([d is not None and any(lo <= d <= hi for lo, hi in windows) for d in dates], dtype=bool)
    return mask if not mask.all() else np.zeros(len(dates), dtype=bool)
