from bfr_core.text import STOP_WORDS, stem, tokenize, words


def test_words_lowercase_and_apostrophes():
    assert words("Don't STOP me-now, 5th!") == ["dont", "stop", "me", "now", "5th"]


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
