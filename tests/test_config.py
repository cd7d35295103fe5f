import pytest

from bfr_core.config import Budget, load_config


def test_defaults_are_the_papers():
    c = load_config()
    assert Budget() == Budget(rounds=3, calls=6, new=30, keep=8)
    assert (c.retrieval.pool, c.retrieval.prefilter, c.retrieval.ground) == (50, 20, 10)
    assert c.llm.provider == "rules" and c.llm.temperature == 0.0


def test_toml_overrides_and_rejects_unknown_keys(tmp_path):
    p = tmp_path / "c.toml"
    p.write_text("[retrieval]\npool = 60\n[llm]\nprovider = 'openai'\n")
    c = load_config(p)
    assert c.retrieval.pool == 60 and c.retrieval.ground == 10 and c.llm.provider == "openai"
    p.write_text("[retrieval]\npools = 2\n")
    with pytest.raises(ValueError, match="unknown key"):
        load_config(p)


def test_settings_nothing_reads_are_refused_not_ignored(tmp_path):
    p = tmp_path / "c.toml"
    p.write_text("[budget]\nrounds = 2\n")
    with pytest.raises(ValueError, match="--budget"):
        load_config(p)
    p.write_text("[retrieval]\ndense_model = 'x'\n")
    with pytest.raises(ValueError, match="unknown key"):
        load_config(p)
    p.write_text("[sweep]\nx = 1\n")
    with pytest.raises(ValueError, match="unknown table"):
        load_config(p)
