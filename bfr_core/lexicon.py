"""Every word list in one place: number words, synonym tables, words that are not names, question
scaffolding.

Two synonym tables and two "not a name" lists really behave differently, so each keeps a name that
says how:
* :data:`CANONICAL_STEM` folds a stem onto one canonical stem ("arriv" -> "receiv"): the offline
  rules backend compares token sets; :data:`RELATED_STEMS` maps a stem to its whole symmetric group:
  Stage I's lexical coverage accepts any related stem in a turn.
* :func:`question_noise` (stemmed on first use) is question scaffolding that carries no content.
* :data:`NOT_NAME_WORDS` (lower-cased; question words, pronouns, calendar words) trims a capitalised
  span of the question down to a name; :data:`NOT_NAME_CAPITALISED` (exact case, question openers and
  months) filters single capitalised words in the offline tool policy.

Does not cover: stop words and stemming (``text``), dates (``dates``).
"""

from __future__ import annotations

import re
from functools import cache

from bfr_core.dates import MONTH_NAMES, WEEKDAYS
from bfr_core.text import stem

NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30,
    "forty": 40, "fifty": 50, "hundred": 100, "once": 1, "twice": 2, "a couple": 2,
}

# Stems folded together so that, e.g., "arrived" can cover "receive". Deliberately tiny.
CANONICAL_STEM = {
    "arriv": "receiv", "deliv": "receiv", "got": "receiv", "came": "receiv", "get": "receiv",
    "bought": "order", "buy": "order", "purchas": "order",
    "began": "start", "begin": "start", "finish": "end", "complet": "end",
    "went": "go", "visit": "go", "travel": "go", "trip": "go",
}

# Related event stems: an endpoint phrased one way in the question is often phrased another way
# in the record ("receive" vs "arrived"). The symmetric closure is :data:`RELATED_STEMS`.
RELATED_GROUPS: tuple[tuple[str, ...], ...] = (
    ("receiv", "arriv", "deliv", "came", "got", "shipped"),
    ("order", "bought", "buy", "purchas"),
    ("start", "began", "begin", "join"),
    ("finish", "complet", "end", "done"),
    ("sold", "sell"),
    ("move", "relocat"),
    ("visit", "went", "trip", "travel"),
    ("marri", "wed", "wedding"),
    ("born", "birth", "birthday"),
    ("meet", "met"),
    ("attend", "went"),
    ("adopt", "got"),
)


def _closure(groups: tuple[tuple[str, ...], ...]) -> dict[str, frozenset[str]]:
    out: dict[str, frozenset[str]] = {}
    for group in groups:
        for w in group:
            out[w] = out.get(w, frozenset()) | frozenset(group)
    return out


RELATED_STEMS: dict[str, frozenset[str]] = _closure(RELATED_GROUPS)

# Capitalised words that are not names: question/auxiliary words, pronouns, calendar words.
NOT_NAME_WORDS = frozenset(
    """what when where which who whom whose why how would could should did does do is are was were
    has have had can will may might i im ive id in on at the a an and or of for to my your our their
    his her its if any some list tell remind please yes no ok okay hi hello thanks""".split()
) | frozenset(MONTH_NAMES) | frozenset(WEEKDAYS)
NOT_NAME_CAPITALISED = {"What", "When", "Where", "Who", "Which", "How", "Why", "Did", "Does", "Do", "Is", "Are",
                        "Was", "Were", "Has", "Have", "Can", "Could", "Would", "Should", "The", "My"} | {
    m.capitalize() for m in MONTH_NAMES}

# Words that make a question but carry no content for coverage (stemmed by :func:`question_noise`).
QUESTION_NOISE_WORDS = tuple("""what when where which who whom whose why how many much
    long would could should might likely kind type sort name names thing things something anything
    some any ever also yet still currently usually often time times total number amount
    do does did done doing get got make made take took go went say said
    one two three first last recent recently previous previously remind tell mention mentioned
    suggest recommend recommended think wondering wonder remember conversation earlier again confirm
    want wanted im ive id youre provided""".split())


@cache
def question_noise() -> frozenset[str]:
    """:data:`QUESTION_NOISE_WORDS` stemmed, on first use: stemming loads NLTK (seconds), which a
    command that never stems (an eval of the dense arms, ``bfr --help``) should not pay at import."""
    return frozenset(stem(w) for w in QUESTION_NOISE_WORDS)

DURATION_UNITS = frozenset("""day days week weeks month months year years hour hours minute minutes
    time""".split())

# A question about the value now, after any update ("Which lens do I use these days?"): the offline
# decomposer adds a requirement for the newest mention (``llm.rules_forms``).
LATEST_CUE = re.compile(
    r"\b(?:current(?:ly)?|now|nowadays|these days|lately|latest|most recent(?:ly)?|at the moment|any ?more|"
    r"still|at present|presently|so far)\b", re.IGNORECASE)
# Words that name a person or a place in a record: a "who" / "where" requirement is covered by a record
# that states its event together with one of them (or a capitalised name; ``method.requirements``).
PERSON_NOUNS = frozenset("""friend friends mom mother dad father parent parents sister brother sibling son
    daughter kid kids child children wife husband partner boyfriend girlfriend fiance fiancee cousin aunt
    uncle grandma grandmother grandpa grandfather niece nephew neighbor neighbour colleague coworker
    boss manager teacher mentor coach doctor roommate classmate family team""".split())
PLACE_NOUNS = frozenset("""park city town village country state beach lake river mountain mountains trail
    island museum gallery restaurant cafe bar pub shop store market mall school university college campus
    office home house apartment gym library church temple studio center centre club hotel airport
    station festival hospital theater theatre stadium zoo garden farm camp abroad downtown""".split())

# The grammar of an English interrogative or request, written from the general rule (not from any
# benchmark's questions): a wh-word opens a content question; an auxiliary or modal before its subject
# opens a yes/no question (subject inversion); a directive verb in the imperative asks for information.
WH_WORDS = frozenset("what when where which who whom whose why how".split())
AUXILIARIES = frozenset("""am is are was were do does did have has had can could will would shall should may might
must isnt arent wasnt werent dont doesnt didnt havent hasnt hadnt cant couldnt wont wouldnt shouldnt""".split())
SUBJECT_WORDS = frozenset("""i you he she it we they there this that these those my your his her its our their
the a an any anyone someone anybody somebody""".split())
REQUEST_VERBS = frozenset("""tell remind list name describe recommend suggest explain give show find help recall
summarize summarise compare""".split())
# Conjunctions that join two clauses (English coordinating and subordinating ones; ``clauses`` splits at
# them): written from the grammar, not from any benchmark's text.
CLAUSE_JOINERS = frozenset("and but so because since though although while".split())
