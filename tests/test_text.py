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
