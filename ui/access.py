"""Who may do what in the app.

Covers two modes:

* **local** (the default): the server listens on 127.0.0.1 only (``.streamlit/config.toml``;
  ``BFR_APP_ADDRESS`` in ``scripts/app.sh`` changes it), so whoever reaches the app is the machine's
  user. Annotators type their name; every configured provider may be used.
* **team**: on when ``.streamlit/secrets.toml`` has an ``[auth]`` section (Streamlit's built-in OIDC
  login, ``st.login``; needs Authlib). Every page asks for a login first; the annotator is the
  logged-in user (e-mail, else name, else subject id), never a typed name; model providers (the
  Trace page's provider, the sidebar's) are offered only to the users listed in ``[bfr]
  model_users`` (e-mail addresses, case-insensitive; ``["*"]`` for every logged-in user). Everyone
  else gets offline rules, which cost nothing.

Does not cover: roles beyond "may call a model" (any logged-in user may label, load data and read
everything), API keys (read by ``bfr_core.llm`` from the environment or secrets, never shown).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st

from bfr_core.errors import BfrError


class AccessDenied(BfrError):
    """The logged-in user may not do this (a model call in team mode)."""


def _secrets() -> Mapping[str, Any]:
    try:
        return dict(st.secrets)
    except Exception:  # no secrets file, or one that does not parse: local mode
        return {}


def team_mode() -> bool:
    return "auth" in _secrets()


def identity() -> str:
    """The logged-in user in team mode ("" otherwise, or when nobody is logged in)."""
    if not team_mode() or not st.user.is_logged_in:
        return ""
    for claim in ("email", "name", "sub"):
        value = st.user.get(claim)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


def model_users() -> tuple[str, ...]:
    bfr = _secrets().get("bfr") or {}
    users = bfr.get("model_users", ()) if isinstance(bfr, Mapping) else ()
    return tuple(str(u).strip().lower() for u in users if str(u).strip())


def may_call_models() -> bool:
    """Whether this user may trigger model (possibly paid) provider calls."""
    if not team_mode():
        return True
    who = identity().lower()
    allowed = model_users()
    return bool(who) and ("*" in allowed or who in allowed)


def require_login() -> None:
    """In team mode, stop the page with a login button until the user has logged in."""
    if not team_mode() or st.user.is_logged_in:
        return
    st.title("BFR Workbench")
    st.info("This workbench is shared by a team: log in to use it. Your labels are saved under your "
            "account.", icon=":material/lock:")
    st.button("Log in", icon=":material/login:", on_click=st.login, key="app_login")
    st.stop()


def sidebar() -> None:
    """Who is logged in, a logout button, and whether they may call models (team mode only)."""
    if not team_mode() or not st.user.is_logged_in:
        return
    st.caption(f"Logged in as **{identity() or 'unknown'}**"
               + ("" if may_call_models() else " · offline rules only (not on the model users list)"))
    st.button("Log out", icon=":material/logout:", on_click=st.logout, key="app_logout")
