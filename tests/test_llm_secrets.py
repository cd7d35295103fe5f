"""A planted API key never shows up in logs, reprs, exceptions, the store or exports."""

from __future__ import annotations

import logging
import traceback

import pytest
from llm_wire_server import WireServer

from bfr_core.config import LLMConfig
from bfr_core.llm import LLMCallFailed, LLMConfigError, Secret, api_key, export_calls, make_llm
from bfr_core.llm.secrets import scrub
from bfr_core.roles import answerer
from bfr_core.store import Store

PLANTED = {"anthropic": "sk-ant-PLANTED-7f3c9e1d5b2a8c4e6f0a", "openai": "sk-PLANTED-2b8e4f6a0c1d3e5f7a9b"}
ENV = {"ANTHROPIC_API_KEY": PLANTED["anthropic"], "OPENAI_API_KEY": PLANTED["openai"]}
Q = "When did I order the shutter release?"


def _leaks(text: str) -> list[str]:
    return [k for k in PLANTED.values() if k in text or k[: len(k) // 3] in text]


def _store_dump(store: Store) -> str:
    cur = store.cursor()
    tables = [r[0] for r in cur.execute("SELECT table_name FROM duckdb_tables()").fetchall()]
    return "\n".join(str(cur.execute(f"SELECT * FROM {t}").fetchall()) for t in tables)


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_planted_key_never_leaks(provider, caplog, tmp_path):
    server = WireServer(reply='{"answer": "February 5th"}').start()
    try:
        url = server.anthropic_url if provider == "anthropic" else server.openai_url
        store = Store(tmp_path / "s.duckdb")
        cfg = LLMConfig(provider=provider, base_url=url, max_retries=1, timeout_s=5)
        caplog.set_level(logging.DEBUG)
        llm = make_llm(cfg, store, run_id="leak", env=ENV, secrets_path="/nonexistent", sleep=lambda s: None)
        assert answerer.answer(llm, Q, ["I ordered it on February 5th."]) == "February 5th"
        server.fail_next("echo")  # a 401 whose body quotes the credentials back
        with pytest.raises(LLMCallFailed) as err:
            answerer.answer(llm, Q, ["other evidence"])
        server.fail_next("500", "500")
        with pytest.raises(LLMCallFailed) as err2:
            answerer.answer(llm, Q, ["third evidence"])
        seen = server.seen[1].headers
        assert PLANTED[provider] in (seen.get("x-api-key", "") + seen.get("authorization", ""))  # it was sent
        exc_text = "".join(
            "".join(traceback.format_exception(e.value)) + str(e.value) + repr(e.value) + e.value.reason
            for e in (err, err2)
        )
        assert "401" in exc_text
        surfaces = {
            "exceptions": exc_text,
            "reprs": repr(llm) + repr(llm.inner) + repr(llm.inner.inner) + str(vars(llm.inner.inner)),
            "logs": caplog.text,
            "store": _store_dump(store),
            "export": str(export_calls(store)),
        }
        for name, text in surfaces.items():
            assert not _leaks(text), f"key leaked into {name}"
        assert exc_text.count("***") >= 1  # the echoed credentials were scrubbed, not just absent
    finally:
        server.stop()


def test_secret_type_hides_its_value():
    s = Secret(PLANTED["openai"])
    assert s.reveal() == PLANTED["openai"]
    assert not _leaks(repr(s) + str(s) + f"{s}" + repr([s]))
    with pytest.raises(TypeError):
        import pickle

        pickle.dumps(s)


def test_scrub_takes_whole_and_half_keys_and_keeps_the_rest():
    k = PLANTED["anthropic"]
    assert scrub(f"key {k}; short {k[:20]}...; other sk-x, task-progress", [k]) == (
        "key ***; short ***; other sk-x, task-progress")


def test_keys_from_env_then_secrets_toml(tmp_path):
    secrets = tmp_path / "secrets.toml"
    secrets.write_text('OPENAI_API_KEY = "sk-from-toml-aaaaaaaa"\n[anthropic]\napi_key = "sk-ant-from-toml-bbbb"\n')
    assert api_key("openai", env={}, secrets_path=secrets).reveal() == "sk-from-toml-aaaaaaaa"
    assert api_key("anthropic", env={}, secrets_path=secrets).reveal() == "sk-ant-from-toml-bbbb"
    assert api_key("openai", env=ENV, secrets_path=secrets).reveal() == PLANTED["openai"]
    assert api_key("openai", env={}, secrets_path=tmp_path / "none.toml") is None


def test_broken_secrets_file_error_does_not_quote_it(tmp_path):
    secrets = tmp_path / "secrets.toml"
    secrets.write_text(f'OPENAI_API_KEY = "{PLANTED["openai"]}\n')  # unterminated string
    with pytest.raises(LLMConfigError) as err:
        api_key("openai", env={}, secrets_path=secrets)
    assert not _leaks("".join(traceback.format_exception(err.value)))


def test_missing_key_says_what_to_set():
    with pytest.raises(LLMConfigError, match="ANTHROPIC_API_KEY"):
        make_llm(LLMConfig(provider="anthropic"), Store(), env={}, secrets_path="/nonexistent")
    with pytest.raises(LLMConfigError, match="OPENAI_API_KEY"):
        make_llm(LLMConfig(provider="openai"), Store(), env={}, secrets_path="/nonexistent")


def test_a_key_written_with_spaces_between_its_characters_is_masked():
    key = "sk-proj-Zq81mWx0Lr5Tb7Yc3Nv9"
    spaced = " ".join(key)
    grouped = " ".join(key[i : i + 4] for i in range(0, len(key), 4))
    tabbed = "\t".join(key[i : i + 2] for i in range(0, len(key), 2))
    for written in (spaced, grouped, tabbed):
        out = scrub(f"Incorrect API key provided: {written}. See the docs.", [key])
        assert out.startswith("Incorrect API key provided: ***") and out.endswith(" See the docs.")
        bare = out.replace(" ", "").replace("\t", "")
        assert not any(key[i : i + 6] in bare for i in range(len(key) - 5)), out
    assert scrub("the quick brown fox jumps over it", [key]) == "the quick brown fox jumps over it"
    other = "Zq81mWx0Lr5Tb7Yc3Nv9xx"  # not sk-shaped: found by its 10-character windows across the spaces
    assert scrub(" ".join(other), [other]).replace("*", "").replace(" ", "") == ""
