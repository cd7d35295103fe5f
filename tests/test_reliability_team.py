"""Team mode fails closed (``ui.access``, ``bfr_core.config.team_settings``), and only a verified claim
names a user (``bfr_core.config.identity_from``).

* The fail-closed matrix: with team mode on (``BFR_TEAM=1``), or undecided (unset) while the secrets
  file exists, a secrets file that does not parse, a missing ``[auth]`` table, a partial one, or a
  bad ``[bfr]`` value stops the app with one message: no page, no sidebar, no login button. The
  same checks as a pure function (``team_settings``), case by case.
* The claim matrix: model access (and any page) only for a login whose ``email`` the provider marks
  verified; an unverified e-mail, or no e-mail with a ``name`` or ``sub`` equal to a listed
  address, gets neither. A configured ``identity_claim`` is used as given.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import streamlit as st
from streamlit import config
from streamlit.runtime.secrets import Secrets, secrets_singleton
from streamlit.testing.v1 import AppTest

from bfr_core import config as C
from bfr_core.store import Store

ROOT = Path(__file__).resolve().parents[1]
LEAD = "lead@example.org"
AUTH = {"redirect_uri": "http://localhost:8501/oauth2callback", "cookie_secret": "test-cookie-secret",
        "client_id": "cid", "client_secret": "csecret",
        "server_metadata_url": "https://id.example.org/.well-known/openid-configuration"}
AUTH_TOML = "[auth]\n" + "".join(f'{k} = "{v}"\n' for k, v in AUTH.items())
MODEL = "anthropic:claude-test"


@pytest.fixture()
def app_env(tmp_path, monkeypatch):
    """An empty store for the app, a configured model provider, and no BFR_TEAM from outside."""
    db = tmp_path / "store.duckdb"
    Store(db).close()
    monkeypatch.setenv("BFR_STORE", str(db))
    cfg = tmp_path / "bfr.toml"
    cfg.write_text('[llm]\nprovider = "anthropic"\nmodel = "claude-test"\n', encoding="utf-8")
    monkeypatch.setenv("BFR_CONFIG", str(cfg))
    monkeypatch.delenv(C.TEAM_ENV, raising=False)
    yield tmp_path
    st.cache_data.clear()
    st.cache_resource.clear()


@pytest.fixture()
def secrets_file(tmp_path, monkeypatch):
    """Point Streamlit at a secrets file of the test's own (read as the real app reads it)."""
    path = tmp_path / "secrets.toml"
    old = config.get_option("secrets.files")
    config.set_option("secrets.files", [str(path)])
    secrets_singleton._reset()  # Streamlit's own login code reads this one
    monkeypatch.setattr(st, "secrets", Secrets())
    yield path
    config.set_option("secrets.files", old)
    secrets_singleton._reset()  # else the next test's app sees this test's [auth]


def _run(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _closed(at: AppTest) -> str:
    """The app stopped before any page: one error, nothing else to use."""
    assert len(at.error) == 1
    assert not at.button and not at.selectbox and not at.text_input and not at.sidebar.children
    return at.error[0].value


# -- fail closed ----------------------------------------------------------------------------------
BAD_FILES = {
    "does not parse": AUTH_TOML.replace('"cid"', "cid"),  # one unquoted value
    "no [auth]": '[bfr]\nmodel_users = ["lead@example.org"]\n',
    "partial [auth]": AUTH_TOML.replace('client_secret = "csecret"\n', ""),
    "empty value": AUTH_TOML.replace('"test-cookie-secret"', '""'),
    "bad model_users": AUTH_TOML + '[bfr]\nmodel_users = "lead@example.org"\n',
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_team_mode_on_and_bad_auth_settings_open_no_page(app_env, secrets_file, monkeypatch, case):
    secrets_file.write_text(BAD_FILES[case], encoding="utf-8")
    monkeypatch.setenv(C.TEAM_ENV, "1")
    message = _closed(_run(AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)))
    assert "stays closed" in message


def test_team_mode_on_without_a_secrets_file_opens_no_page(app_env, secrets_file, monkeypatch):
    monkeypatch.setenv(C.TEAM_ENV, "1")
    assert "no [auth] table" in _closed(_run(AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)))


def test_an_unparsable_secrets_file_opens_no_page_even_with_the_switch_unset(app_env, secrets_file):
    secrets_file.write_text(BAD_FILES["does not parse"], encoding="utf-8")
    message = _closed(_run(AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)))
    assert "cannot be read" in message and "BFR_TEAM=0" in message


def test_the_same_file_quoted_asks_for_a_login(app_env, secrets_file, monkeypatch):
    secrets_file.write_text(AUTH_TOML, encoding="utf-8")
    monkeypatch.setenv(C.TEAM_ENV, "1")
    at = _run(AppTest.from_file(str(ROOT / "app.py"), default_timeout=60))
    assert [b.label for b in at.button] == ["Log in"] and not at.selectbox


def test_switch_off_is_local_mode_whatever_the_file(app_env, secrets_file, monkeypatch):
    secrets_file.write_text(BAD_FILES["does not parse"], encoding="utf-8")
    monkeypatch.setenv(C.TEAM_ENV, "0")
    at = _run(AppTest.from_file(str(ROOT / "app.py"), default_timeout=60))
    assert not at.error and MODEL in at.selectbox(key="app_provider").options


@pytest.mark.parametrize(("switch", "secrets", "problem", "expected"), [
    (None, None, "", C.LOCAL),                                  # no file: local
    ("0", None, "bad toml", C.LOCAL),                           # explicitly local
    (None, {"auth": AUTH}, "", C.TeamSettings(True)),               # [auth] without the switch: team
    ("1", {"auth": AUTH, "bfr": {"model_users": [" Lead@Example.org "], "identity_claim": "upn"}}, "",
     C.TeamSettings(True, "upn", (LEAD,))),
    ("1", {"auth": AUTH, "bfr": {"leads": [" Lead@Example.org "]}}, "", C.TeamSettings(True, leads=(LEAD,))),
    ("1", {"auth": {**{k: AUTH[k] for k in C.AUTH_KEYS}, "google": AUTH}}, "", C.TeamSettings(True)),
])
def test_settings_that_open(switch, secrets, problem, expected):
    assert C.team_settings(switch, secrets, problem) == expected


@pytest.mark.parametrize(("switch", "secrets", "problem", "says"), [
    ("1", None, "", "no [auth] table"),
    ("1", {"auth": "x"}, "", "no [auth] table"),
    (None, None, "Invalid value (at line 4, column 13)", "cannot be read"),
    ("1", {"auth": {k: v for k, v in AUTH.items() if k != "redirect_uri"}}, "", "lacks redirect_uri"),
    ("1", {"auth": {**{k: AUTH[k] for k in C.AUTH_KEYS}, "google": {"client_id": "x"}}}, "",
     "lacks client_secret, server_metadata_url"),
    ("1", {"auth": {**AUTH, "client_id": 7}}, "", "lacks client_id"),
    ("1", {"auth": AUTH, "bfr": {"identity_claim": ""}}, "", "identity_claim"),
    ("1", {"auth": AUTH, "bfr": []}, "", "must be a table"),
    ("1", {"auth": AUTH, "bfr": {"leads": "lead@example.org"}}, "", "leads must be a list"),
    ("yes please", {"auth": AUTH}, "", "neither on (1) nor off (0)"),
])
def test_settings_that_stay_closed(switch, secrets, problem, says):
    with pytest.raises(C.TeamSettingsError, match="stays closed") as err:
        C.team_settings(switch, secrets, problem)
    assert says in str(err.value)


# -- claims ---------------------------------------------------------------------------------------
CLAIMS = {
    "verified e-mail": ({"email": LEAD, "email_verified": True}, LEAD),
    "verified e-mail (text flag)": ({"email": LEAD, "email_verified": "true"}, LEAD),
    "unverified e-mail": ({"email": LEAD, "email_verified": False}, ""),
    "e-mail without a verified flag": ({"email": LEAD}, ""),
    "no e-mail, name matches": ({"name": LEAD, "email_verified": True}, ""),
    "no e-mail, sub matches": ({"sub": LEAD, "email_verified": True}, ""),
    "blank e-mail, name matches": ({"email": " ", "email_verified": True, "name": LEAD}, ""),
}


@pytest.mark.parametrize("case", sorted(CLAIMS))
def test_identity_only_from_a_verified_email(case):
    claims, expected = CLAIMS[case]
    assert C.identity_from(claims) == expected


def test_a_configured_claim_is_used_as_given():
    assert C.identity_from({"upn": LEAD, "email": "x@example.org"}, "upn") == LEAD
    assert C.identity_from({"email": LEAD, "email_verified": True}, "upn") == ""


@pytest.mark.parametrize("case", sorted(CLAIMS))
def test_model_access_only_for_a_verified_listed_email(app_env, monkeypatch, case):
    claims, expected = CLAIMS[case]
    monkeypatch.setenv(C.TEAM_ENV, "1")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.secrets["auth"] = AUTH
    at.secrets["bfr"] = {"model_users": [LEAD]}
    at.user = {"is_logged_in": True, **claims}
    _run(at)
    if expected:
        assert MODEL in at.selectbox(key="app_provider").options
        at.switch_page("pages/annotate.py")
        _run(at)
        assert not [t for t in at.text_input if t.key == "annot_name"]  # no name to type
    else:  # no page at all: no provider to pick, no annotator name to type
        assert not at.selectbox and not at.text_input
        assert "does not carry a verified e-mail" in at.error[0].value
