"""Entity view: the entity map (NER, capitalised fallback, speakers), ranking, the NER cache."""

from __future__ import annotations

from datetime import datetime

import pytest

from bfr_core.records import Bundle, IngestReport, Scope, Session, Turn
from bfr_core.retrieval.views import entity as ent
from bfr_core.retrieval.views.base import View
from bfr_core.retrieval.views.entity import EntityView, build_index, cached_ner, capitalised_names, normalise
from bfr_core.store import Store

TURNS = (
    Turn("t1", "s1", 0, "Caroline", "Hey Melanie! I met Rose at the Pride parade in Boston."),
    Turn("t2", "s1", 1, "Melanie", "That's great, Caroline. I bet Rose is lovely."),
    Turn("t3", "s1", 2, "Caroline", "Great. I also read a book by Caroline Shaw."),
    Turn("t4", "s2", 0, "Melanie", "my friend jasper visited. the rose garden was in bloom."),
    Turn("t5", "s2", 1, "Caroline", "Say hi to Melanie's kids, and to Melanie and Melanie's husband."),
)


def fake_ner(texts):
    """Pretend NER: Boston (GPE) and 'Caroline Shaw' (PERSON) only, like a model that misses names."""
    out = []
    for t in texts:
        spans = []
        if "Boston" in t:
            spans.append(("GPE", "Boston"))
        if "Caroline Shaw" in t:
            spans.append(("PERSON", "Caroline Shaw"))
        out.append(spans)
    return out


def test_normalise():
    assert normalise("Melanie's") == "melanie"
    assert normalise("  Caroline   SHAW ") == "caroline shaw"
    assert normalise("O'Brien") == "obrien"
    assert normalise("José's") == normalise("JOSE") == "jose"


def test_accented_names_are_one_key_in_every_source():
    turns = (Turn("a1", "s1", 0, "Zoë", "I flew to Zürich with Renée, then Renée went home."),
             Turn("a2", "s1", 1, "Ana", "zoe, did Renee like it?"))
    assert capitalised_names([t.text for t in turns])[0] == ["zurich", "renee", "renee"]
    view = EntityView(turns, lambda texts: [[] for _ in texts])
    assert [h.turn_id for h in view.search("Renée", 5)] == ["a1", "a2"]  # mentions, either spelling
    assert [h.turn_id for h in view.search("Zoe", 5)][0] == "a1"  # she spoke a1


def test_capitalised_fallback_skips_sentence_starts_and_common_words():
    names = capitalised_names([t.text for t in TURNS])
    assert "rose" in names[0] and "melanie" in names[0] and "hey" not in names[0]
    assert "great" not in names[2]  # "Great." starts a sentence
    # "Rose" is capitalised twice and lower-case once ("the rose garden"): still a name.
    assert "rose" in names[1]


def test_index_sources():
    index = build_index(TURNS, fake_ner([t.text for t in TURNS]))
    assert index["boston"] == {0}
    assert index["caroline shaw"] == {2} and 2 in index["shaw"]
    assert {0, 4} <= index["melanie"]
    assert "the" not in index and "im" not in index


def test_search_mentions_then_speaker_then_recency():
    view = EntityView(TURNS, fake_ner)
    assert isinstance(view, View)
    hits = view.search("Melanie", 10)
    # t5 mentions Melanie three times; t1 once (and is Caroline's); t2/t4 are spoken by Melanie.
    assert [h.turn_id for h in hits] == ["t5", "t1", "t4", "t2"]
    assert hits[0].score == 3 and hits[2].score == 0.5
    assert [h.turn_id for h in view.search("melanie", 2, exclude={"t5"})] == ["t1", "t4"]


def test_lower_case_names_fall_back_to_text_search():
    view = EntityView(TURNS, fake_ner)
    assert [h.turn_id for h in view.search("Jasper", 5)] == ["t4"]
    assert view.search("Nobody", 5) == [] and view.search("", 5) == [] and view.search("Rose", 0) == []


def test_entities_listing_and_lazy_build():
    calls = []

    def ner(texts):
        calls.append(len(texts))
        return fake_ner(texts)

    view = EntityView(TURNS, ner)
    assert calls == []  # nothing until the first search
    view.search("Rose", 3)  # parses only t1, t2, t4 (the texts holding "rose")
    view.search("Boston", 3)  # t1: parsed already
    view.search("the", 3)  # a stop key is never an NER key: nothing parsed
    assert calls == [3]
    assert view.entities()[:2] == ["caroline", "melanie"]  # most turns first, then by name
    assert calls == [3, 2]  # the full map parses the rest once


def test_lazy_search_equals_the_full_map():
    """Searching before any full parse gives the rows the full entity map gives, for every key it
    holds and for cues that are no key, with names NER finds in odd forms (possessive, apostrophe,
    hyphen, accents, multi-word)."""
    texts = ["O'Brien met José at the café in São Paulo.", "Mary-Jane's dog; mary jane laughed.",
             "we saw obrien and Jose-Luis yesterday", "The New York trip with Anna Lee was great.",
             "anna said lee is in new york", "Caroline's sister met Caroline Shaw in Boston.", "nothing here"]
    turns = tuple(Turn(f"u{i}", "s", i, "Ann" if i % 2 else "Bob", t) for i, t in enumerate(texts))
    spans = {"O'Brien": "PERSON", "José": "PERSON", "São Paulo": "GPE", "Mary-Jane's": "PERSON",
             "Jose-Luis": "PERSON", "New York": "GPE", "Anna Lee": "PERSON", "Caroline's": "PERSON",
             "Caroline Shaw": "PERSON", "Boston": "GPE"}

    def ner(batch):
        return [[(label, span) for span, label in spans.items() if span in t] for t in batch]

    full = EntityView(turns, ner)
    keys = list(full.index()) + ["anna", "lee", "york", "sao", "jos", "obrien", "mary jane", "ann", "nobody", "the"]
    for key in keys:
        lazy = EntityView(turns, ner)
        assert lazy.search(key, 10) == full.search(key, 10), key


def _store() -> Store:
    """A store holding dataset "d": the five TURNS in two sessions, one scope."""
    store = Store()
    sessions = (Session("s1", datetime(2023, 1, 1)), Session("s2", datetime(2023, 1, 2)))
    store.write_bundle(Bundle("d", "jsonl", "mem", "sha", sessions, TURNS, (Scope("d", "h", ("s1", "s2")),), (),
                              IngestReport("d", "jsonl", "mem")))
    return store


def test_ner_cache_by_text_hash(monkeypatch):
    store = _store()
    seen = []
    monkeypatch.setattr(ent, "run_ner", lambda texts, processes=1, advance=None: seen.extend(texts) or fake_ner(texts))
    texts = [t.text for t in TURNS]
    first = cached_ner(store, texts + texts[:1])
    assert len(seen) == 5  # the duplicate is parsed once
    assert cached_ner(store, texts) == first[:5]
    assert len(seen) == 5  # all from the cache now
    assert first[0] == [("GPE", "Boston")]


def test_ensure_entities_fills_the_cache_once_for_a_dataset(monkeypatch):
    store = _store()
    seen = []
    monkeypatch.setattr(ent, "run_ner", lambda texts, processes=1, advance=None: seen.extend(texts) or fake_ner(texts))
    assert ent.ensure_entities(store, "d") == 5 and sorted(seen) == sorted(t.text for t in TURNS)
    assert ent.ensure_entities(store, "d") == 0 and len(seen) == 5  # a second ingest step parses nothing
    view = EntityView(TURNS, lambda texts: cached_ner(store, texts))
    assert [h.turn_id for h in view.search("Boston", 5)] == ["t1"] and len(seen) == 5  # the view reads the cache


@pytest.mark.slow
def test_real_spacy_is_the_same_in_worker_processes():
    texts = ["Yesterday Melanie flew to Paris with Caroline to see the Louvre.", "I met Rose at Target in Boston."] * 3
    assert ent.run_ner(texts, processes=2) == ent.run_ner(texts)


@pytest.mark.slow
def test_real_spacy_reports_every_text_it_parsed():
    steps: list[int] = []
    texts = ["I met Rose at Target in Boston."] * (ent.NER_STEP + 5)
    assert ent.run_ner(texts, advance=steps.append) == ent.run_ner(texts)
    assert steps == [ent.NER_STEP, 5]


@pytest.mark.slow
def test_real_spacy_finds_people_and_places():
    found = ent.run_ner(["Yesterday Melanie flew to Paris with Caroline to see the Louvre."])[0]
    labels = {label for label, _ in found}
    assert {"PERSON", "GPE"} <= labels or {"PERSON", "FAC"} <= labels
    assert all(label in ent.NER_LABELS for label in labels)


def test_ensure_entities_counts_parsed_texts_on_a_meter_and_caches_nothing_when_stopped(monkeypatch):
    from bfr_core.progress import StepMeter, StepStopped

    store = _store()

    def ner(texts, processes=1, advance=None):
        for _ in texts:
            advance(1)
        return fake_ner(texts)

    monkeypatch.setattr(ent, "run_ner", ner)
    stopped = StepMeter()
    stopped.stopped = True
    with pytest.raises(StepStopped):
        ent.ensure_entities(store, "d", meter=stopped)
    meter = StepMeter()
    assert ent.ensure_entities(store, "d", meter=meter) == 5  # the stopped parse cached nothing
    assert (meter.done, meter.total) == (5, 5)
