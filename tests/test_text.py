from bfr_core.text import STOP_WORDS, fold, stem, tokenize, unaccent, words


def test_words_lowercase_and_apostrophes():
    assert words("Don't STOP me-now, 5th!") == ["dont", "stop", "me", "now", "5th"]


def test_words_of_any_script_accents_folded():
    # "Zürich" is one word (it was "z" + "rich", and "rich" matched unrelated turns); an accent never
    # decides a match, in either direction
    assert words("Café in Zürich, naïve Zoë!") == ["cafe", "in", "zurich", "naive", "zoe"]
    assert words("JOSÉ") == words("jose") == ["jose"]
    assert words("Straße ﬁne Ｆｕｌｌ") == ["strasse", "fine", "full"]  # case folding and compatibility forms
    assert words("東京 지금 ελληνικά ёлка") == ["東京", "지금", "ελληνικα", "елка"]  # other scripts kept, not dropped
    assert words("emoji 😀 snake_case") == ["emoji", "snake", "case"]


def test_fold_drops_only_the_latin_greek_cyrillic_accents():
    assert fold("Ça Va") == "ca va" and fold("plain ASCII") == "plain ascii"
    assert fold("が") == "が"  # kana's voicing mark is not an accent: "ga" stays apart from "ka"
    assert fold("नमस्ते") == "नमस्ते"  # Devanagari's virama kept
    assert fold("ΐ") == "ι"  # case folding that adds accents is folded too
    assert unaccent("José ﬁt") == "Jose fit" and unaccent("Plain") == "Plain"  # case kept


def test_tokenize_removes_stop_words_including_apostrophe_forms():
    assert tokenize("I don't know what the shutter is") == ["know", "shutter"]
    assert tokenize("the shutter", stop=False) == ["the", "shutter"]


def test_stemming_is_porter():
    assert stem("ordered") == "order" and stem("arriving") == "arriv"
    assert tokenize("Ordering cameras", stemmed=True) == ["order", "camera"]


def test_stop_list_is_nltk_sized():
    assert len(STOP_WORDS) == 179


def test_importing_the_eval_command_does_not_load_the_stemmer():
    # NLTK (with scipy) takes seconds to import; only work that stems should pay for it
    import subprocess
    import sys

    code = ("import sys, bfr_core.commands.eval, bfr_core.pipeline, bfr_core.lexicon; "
            "print('nltk' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_lazy_word_lists_are_stemmed():
    from bfr_core.lexicon import question_noise

    assert stem("recommended") in question_noise() and "what" in question_noise()


def test_unspaced_scripts_become_character_bigrams_and_other_scripts_stay_words():
    from bfr_core.text import bigrams

    assert words("我在东京大学读书，你呢？") == ["我在", "在东", "东京", "京大", "大学", "学读", "读书", "你呢"]
    assert words("Tokyo東京タワーに行った") == ["tokyo", "東京", "京タ", "タワ", "ワー", "ーに", "に行", "行っ", "った"]
    assert words("José 王 서울에 갔다") == ["jose", "王", "서울에", "갔다"]  # one character stays whole; Hangul is spaced
    assert bigrams("abc東京def") == ["abc", "東京", "def"]
    assert words("Zürich isn't far") == ["zurich", "isnt", "far"]  # nothing else changes


def test_bm25_finds_a_chinese_turn_by_shared_bigrams():
    from bfr_core.records import Turn
    from bfr_core.retrieval.views.bm25 import BM25View

    turns = [Turn("t1", "s1", 0, "A", "我上周在网上订了一个新的相机背带。"),
             Turn("t2", "s1", 1, "B", "今天天气很好，我们去公园散步吧。"),
             Turn("t3", "s1", 2, "A", "周末我想去看电影。")]
    scores = BM25View(turns, stemmed=True, with_speaker=False).scores("我的相机背带是什么时候订的？")
    assert int(scores.argmax()) == 0 and scores[0] > 0  # one token per run before: no turn shared a term
