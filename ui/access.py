"""Who may do what in the app.

Covers two modes, chosen by the ``BFR_TEAM`` environment variable (outside the secrets file, so a
typo in that file cannot switch team mode off):

* **local** (``BFR_TEAM=0``, or unset without an ``[auth]`` table): the server listens on 127.0.0.1
  only (``.streamlit/config.toml``; ``BFR_APP_ADDRESS`` in ``scripts/app.sh`` changes it), so whoever
  reaches the app is the machine's user. Annotators type their name; every configured provider may
  be used.
* **team** (``BFR_TEAM=1``; unset with an ``[auth]`` table in ``.streamlit/secrets.toml`` too):
  Streamlit's built-in OIDC login (``st.login``; needs Authlib). Every page asks for a login first;
  the user is the value of one verified claim (``email`` with ``email_verified`` true, or the claim
  ``[bfr] identity_claim`` names), never a display name or ``sub``; a login without it gets no page.
  Model providers are offered only to the users listed in ``[bfr] model_users`` (case-insensitive;
  ``["*"]`` for every logged-in user); everyone else gets offline rules, which cost nothing.
  Leads (``[bfr] leads``) may export every annotator's labels (once their own labelling is done)
  and see and cancel everyone's evaluation jobs; anyone else exports only their own labels, and
  sees and cancels only the jobs they started.

Fails closed: when team mode is on or cannot be ruled out, any error reading the settings (a
secrets file that does not parse, a missing or partial ``[auth]`` table, a bad ``[bfr]`` value, an
unknown ``BFR_TEAM`` value) stops the app with one message naming it (:func:`require_login`).

Does not cover: API keys (read by ``bfr_core.llm`` from the environment or secrets, never shown).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import streamlit as st

from bfr_core.config import TEAM_ENV, TeamSettings, TeamSettingsError, identity_from, team_settings
from bfr_core.errors import BfrError
from ui import markup


class AccessDenied(BfrError):
    """The logged-in user may not do this (a model call in team mode)."""

def _secrets() -> tuple[Mapping[str, Any] | None, str]:
    """(the secrets, "") or (None, "") without a secrets file, or (None, why it cannot be read)."""
    try:
        return st.secrets.to_dict(), ""
    except FileNotFoundError as exc:  # StreamlitSecretNotFoundError: no file, or one that does not load
        from streamlit import config

        files = [Path(f) for f in config.get_option("secrets.files") or ()]
        return None, (str(exc).splitlines()[0] if any(f.exists() for f in files) else "")
    except Exception as exc:  # noqa: BLE001  (fail closed on anything else too)
        return None, f"{type(exc).__name__}: {exc}"


def settings() -> TeamSettings:
    """This app's access settings; raises TeamSettingsError (see :func:`require_login`)."""
    secrets, problem = _secrets()
    return team_settings(os.environ.get(TEAM_ENV), secrets, problem)


def _settings_or_closed() -> TeamSettings:
    """For the helpers below: settings, or team mode with nobody allowed when they cannot be read
    (require_login has stopped the page by then; this only keeps a later call from opening up)."""
    try:
        return settings()
    except TeamSettingsError:
        return TeamSettings(team=True)


def team_mode() -> bool:
    return _settings_or_closed().team


def identity() -> str:
    """The logged-in user in team mode ("" otherwise, or when nobody with a verified claim is logged in)."""
    s = _settings_or_closed()
    if not s.team or not st.user.is_logged_in:
        return ""
    return identity_from(st.user.to_dict(), s.claim)


def model_users() -> tuple[str, ...]:
    return _settings_or_closed().model_users


def may_call_models() -> bool:
    """Whether this user may trigger model (possibly paid) provider calls."""
    s = _settings_or_closed()
    return not s.team or _listed(s.model_users)


def _listed(users: tuple[str, ...]) -> bool:
    who = identity().lower()
    return bool(who) and ("*" in users or who in users)


def is_lead() -> bool:
    """Whether this user is a lead (``[bfr] leads``); in local mode nobody is (there is one user)."""
    s = _settings_or_closed()
    return s.team and _listed(s.leads)


def may_export_all(own_done: bool) -> bool:
    """Whether this user may export every annotator's labels: only once their own queue is done, and in
    team mode only a lead (an annotator must not read another's labels, or the arms behind the items)."""
    return own_done and (not team_mode() or is_lead())


def may_see_job(owner: str) -> bool:
    """Whether this user sees (command, spend) and may cancel a job started by ``owner`` (its starter's
    :func:`identity`): in local mode everyone; in team mode its owner and the leads."""
    if not team_mode():
        return True
    who = identity()
    return bool(who) and (who.lower() == owner.lower() or is_lead())


def require_login() -> None:
    """Stop the page unless access is settled: settings that cannot be read stop it with their error;
    in team mode, a login button until the user has logged in, and a refusal for a login without
    the verified claim."""
    try:
        s = settings()
    except TeamSettingsError as exc:
        st.title("BFR Workbench")
        st.error(str(exc), icon=":material/lock:")  # settings the admin wrote, no user-given text
        st.stop()
        return
    if not s.team or (st.user.is_logged_in and identity()):
        return
    st.title("BFR Workbench")
    if not st.user.is_logged_in:
        st.info("This workbench is shared by a team: log in to use it. Your labels are saved under your "
                "account.", icon=":material/lock:")
        st.button("Log in", icon=":material/login:", on_click=st.login, key="app_login")
        st.stop()
    if not identity():
        what = "a verified e-mail address" if s.claim == "email" else f"the {markup.code(s.claim)} claim"
        st.error(f"Your login does not carry {what}, which this workbench uses to name you. Verify your "
                 "e-mail with your identity provider, or ask the team's admin.", icon=":material/lock:")
        st.button("Log out", icon=":material/logout:", on_click=st.logout, key="app_logout")
        st.stop()


def sidebar() -> None:
    """Who is logged in, a logout button, and whether they may call models (team mode only)."""
    if not team_mode() or not st.user.is_logged_in:
        return
    st.caption(f"Logged in as **{markup.text(identity() or 'unknown')}**"
               + ("" if may_call_models() else " · offline rules only (not on the model users list)"))
    st.button("Log out", icon=":material/logout:", on_click=st.logout, key="app_logout")
