"""ui.access: local mode bound to 127.0.0.1, team mode on Streamlit's login (faked through AppTest's
``user`` and ``secrets``), model calls only for listed users, and no key ever on a page."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
from conftest import app_test, texts

ROOT = Path(__file__).resolve().parents[2]
AUTH = {"redirect_uri": "http://localhost:8501/oauth2callback", "cookie_secret": "test-cookie-secret",
        "client_id": "cid", "client_secret": "csecret-not-shown",
        "server_metadata_url": "https://id.example.org/.well-known/openid-configuration"}
KEY = "sk-ant-api03-TESTKEY-0123456789abcdef"  # a key in the environment: never on a page
PAGES = ("pages/home.py", "pages/data.py", "pages/trace.py", "pages/demo.py", "pages/failures.py",
         "pages/annotate.py")


@pytest.fixture()
def model_config(tmp_path, monkeypatch) -> str:
    cfg = tmp_path / "bfr.toml"
    cfg.write_text('[llm]\nprovider = "anthropic"\nmodel = "claude-test"\n', encoding="utf-8")
    monkeypatch.setenv("BFR_CONFIG", str(cfg))
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    return "anthropic:claude-test"


def team(user: dict | None, model_users: list[str] | None = None):
    at = app_test()
    at.secrets["auth"] = AUTH
    if model_users is not None:
        at.secrets["bfr"] = {"model_users": model_users}
    at.user = user if user is not None else {"is_logged_in": False}
    return at


def _everything(at) -> str:
    parts = [texts(at)]
    for w in list(at.selectbox) + list(at.text_input) + list(at.button):
        parts += [str(w.label), str(getattr(w, "value", ""))] + [str(o) for o in getattr(w, "options", [])]
    for d in at.dataframe:
        parts.append(d.value.to_csv())
    return "\n".join(parts)


def test_the_server_listens_on_localhost_by_default():
    cfg = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert cfg["server"]["address"] == "127.0.0.1"


@pytest.mark.parametrize(("env", "expected"), [({}, ["--server.address", "127.0.0.1"]), ({"BFR_APP_ADDRESS": "0.0.0.0"},
                                                          ["--server.address", "0.0.0.0"])])
def test_app_sh_passes_bfr_app_address_on(tmp_path, env, expected):
    """scripts/app.sh itself, with set-up and streamlit replaced by stand-ins that print their arguments."""
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "app.sh", tmp_path / "scripts" / "app.sh")
    (tmp_path / "scripts" / "setup.sh").write_text("true\n")
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    fake = tmp_path / ".venv" / "bin" / "streamlit"
    fake.write_text('#!/usr/bin/env bash\nprintf "%s\\n" "$@"\n')
    fake.chmod(0o755)
    run_env = {k: v for k, v in os.environ.items() if k != "BFR_APP_ADDRESS"} | env
    out = subprocess.run(["bash", str(tmp_path / "scripts" / "app.sh"), "--server.port", "9999"],
                         capture_output=True, text=True, env=run_env, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["run", "app.py", *expected, "--server.port", "9999"]


def test_local_mode_has_no_login_and_offers_the_configured_model(app_db, model_config):
    at = app_test().run()
    assert not at.exception and not [b for b in at.button if b.key == "app_login"]
    assert model_config in at.selectbox(key="app_provider").options


def test_team_mode_asks_for_a_login_before_any_page(app_db):
    at = team(None).run()
    assert not at.exception
    assert [b.label for b in at.button] == ["Log in"]
    assert not at.selectbox and not at.text_input  # nothing of the app before the login
    assert "log in" in texts(at).lower()


def test_team_mode_annotator_is_the_logged_in_user(app_db):
    at = team({"is_logged_in": True, "email": "ann@example.org", "email_verified": True, "name": "Ann"}).run()
    at.switch_page("pages/annotate.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert not [t for t in at.text_input if t.key == "annot_name"]  # no name to type (or to fake)
    assert "Labelling as **ann@example.org**" in texts(at).replace("\\", "")
    at.button(key="annot_sufficient").click().run()
    assert not at.exception, [e.value for e in at.exception]
    from bfr_core.store import Store

    s = Store(app_db, read_only=True)
    assert s.cursor().execute("SELECT DISTINCT annotator FROM labels").fetchall() == [("ann@example.org",)]
    s.close()


@pytest.mark.parametrize(("who", "allowed", "may"), [
    ("lead@example.org", ["LEAD@example.org"], True),   # listed (case-insensitive)
    ("ann@example.org", ["lead@example.org"], False),   # not listed: offline rules only
    ("ann@example.org", None, False),                   # no list: nobody calls models
    ("ann@example.org", ["*"], True),                   # everyone logged in
])
def test_only_listed_users_may_call_models(app_db, model_config, who, allowed, may):
    at = team({"is_logged_in": True, "email": who, "email_verified": True}, allowed).run()
    assert not at.exception, [e.value for e in at.exception]
    assert (model_config in at.selectbox(key="app_provider").options) is may
    at.switch_page("pages/trace.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert (model_config in at.selectbox(key="trace_provider").options) is may
    if not may:
        assert "offline rules only" in texts(at)


def test_no_page_shows_a_key(app_db, model_config):
    at = team({"is_logged_in": True, "email": "lead@example.org", "email_verified": True}, ["lead@example.org"])
    at.secrets["ANTHROPIC_API_KEY"] = KEY
    at.run()
    for page in PAGES:
        at.switch_page(page).run()
        assert not at.exception, (page, [e.value for e in at.exception])
        shown = _everything(at)
        for secret in (KEY, KEY[-8:], AUTH["client_secret"], AUTH["cookie_secret"]):
            assert secret not in shown, (page, secret)


def test_pages_and_ui_never_read_a_key():
    pattern = re.compile(r"api_key|API_KEY|client_secret|cookie_secret", re.I)
    for path in [*(ROOT / "pages").glob("*.py"), *(ROOT / "ui").glob("*.py"), ROOT / "app.py"]:
        assert not pattern.search(path.read_text(encoding="utf-8")), path
