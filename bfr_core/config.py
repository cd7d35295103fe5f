"""Settings as frozen dataclasses, with the paper's defaults; loadable from a TOML file.

Covers retrieval pool sizes (Appendix E), the :class:`Budget` record of the completion budget
(Section 4.3; an arm's budget is a named grid point C0..C9 from ``bfr_core.method.budgets``, chosen with
``--budget``, never a config file) and the LLM role settings. A TOML file may set ``[retrieval]`` and
``[llm]``; ``[budget]`` and unknown keys are refused with a message, so no setting is silently ignored.
Also the app's team mode (:func:`team_settings`: the ``BFR_TEAM`` switch and the login settings of
``.streamlit/secrets.toml``, checked so that any doubt keeps the app closed) and who a login names
(:func:`identity_from`: one verified claim). ``ui.access`` reads the secrets and applies them.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any


@dataclass(frozen=True, slots=True)
class Budget:
    rounds: int = 3  # B_step: completion rounds
    calls: int = 6  # B_call: retrieval calls across all rounds
    new: int = 30  # B_new: newly retained records across all rounds
    keep: int = 8  # k_keep: records the retention rule keeps per round (the grid sets 20 for MV, see budgets)


@dataclass(frozen=True, slots=True)
class RetrievalConfig:
    k: int = 10  # usual top-k cutoff of the one-shot baselines
    pool: int = 50  # N: Stage I expanded candidate pool
    prefilter: int = 20  # P: prefilter cap
    ground: int = 10  # b: source turns kept by grounding (E0)
    fallback: int = 3  # f: prefilter head used when selection is empty


@dataclass(frozen=True, slots=True)
class LLMConfig:
    provider: str = "rules"  # rules | anthropic | openai | local
    model: str = ""  # provider model id; empty = the provider's default
    base_url: str = ""  # OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp server)
    temperature: float = 0.0  # every paper call is at temperature zero
    timeout_s: float = 60.0  # per request
    max_retries: int = 4  # on 429 / 5xx / timeouts, with exponential backoff
    concurrency: int = 2  # simultaneous requests per provider
    rpm: float = 0.0  # requests per minute per provider (0 = no limit)
    tpm: float = 0.0  # tokens per minute per provider, estimated prompt + max_tokens (0 = no limit)


@dataclass(frozen=True, slots=True)
class Config:
    retrieval: RetrievalConfig = field(default_factory=RetrievalConfig)
    llm: LLMConfig = field(default_factory=LLMConfig)


def _section(cls: type, data: dict[str, Any], name: str) -> Any:
    known = {f.name for f in fields(cls)}
    unknown = set(data) - known
    if unknown:
        raise ValueError(f"unknown key(s) in [{name}]: {', '.join(sorted(unknown))}")
    return replace(cls(), **data)


CONFIG_ENV = "BFR_CONFIG"
PROJECT_CONFIG = Path(__file__).resolve().parents[1] / "bfr.toml"


def config_path(env: Mapping[str, str] | None = None) -> Path | None:
    """The config file in force: the file ``$BFR_CONFIG`` names, else ``bfr.toml`` in the repository
    folder when there is one, else ``None`` (the defaults)."""
    named = (os.environ if env is None else env).get(CONFIG_ENV, "").strip()
    if named:
        return Path(named).expanduser()
    return PROJECT_CONFIG if PROJECT_CONFIG.is_file() else None


def load_config(path: str | Path | None = None) -> Config:
    """Defaults, overridden by a TOML file with [retrieval] and [llm] tables."""
    if path is None:
        return Config()
    data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    if "budget" in data:
        raise ValueError("[budget] is not read from a config file: budgets are the grid points C0..C9, "
                         "chosen per run with --budget (bfr_core.method.budgets)")
    unknown = set(data) - {"retrieval", "llm"}
    if unknown:
        raise ValueError(f"unknown table(s) {', '.join(sorted(unknown))}; a config file holds [retrieval] and [llm]")
    return Config(
        retrieval=_section(RetrievalConfig, data.get("retrieval", {}), "retrieval"),
        llm=_section(LLMConfig, data.get("llm", {}), "llm"),
    )


# -- team mode (the app's login; ui.access reads the secrets and applies these) -----------------
TEAM_ENV = "BFR_TEAM"
_ON = ("1", "true", "yes", "on")
_OFF = ("0", "false", "no", "off")
SECRETS = ".streamlit/secrets.toml"
# What Streamlit's OIDC login needs: these two, and one provider (flat in [auth] or an [auth.NAME] table)
AUTH_KEYS = ("redirect_uri", "cookie_secret")
PROVIDER_KEYS = ("client_id", "client_secret", "server_metadata_url")


class TeamSettingsError(ValueError):  # base layer: errors.py is not importable here
    """Team mode is on (or may be) but its settings cannot be read; the app must not open."""


@dataclass(frozen=True, slots=True)
class TeamSettings:
    team: bool
    claim: str = "email"  # the claim that names the user
    model_users: tuple[str, ...] = ()
    leads: tuple[str, ...] = ()  # who may export every annotator's labels and see and cancel every job


LOCAL = TeamSettings(team=False)


def team_settings(switch: str | None, secrets: Mapping[str, Any] | None, problem: str = "") -> TeamSettings:
    """The access settings from ``BFR_TEAM`` (``switch``) and the secrets (``None`` when there is no
    secrets file; ``problem`` says why it could not be read). Raises TeamSettingsError."""
    value = (switch or "").strip().lower()
    if value in _OFF:
        return LOCAL
    if value and value not in _ON:
        raise TeamSettingsError(f"{TEAM_ENV}={switch!r} is neither on (1) nor off (0); the app stays closed")
    if problem:
        raise TeamSettingsError(
            f"{SECRETS} cannot be read ({problem}); the app stays closed because it may hold the team "
            f"login. Fix the file, or set {TEAM_ENV}=0 to run locally without a login")
    secrets = secrets or {}
    if not value and "auth" not in secrets:
        return LOCAL
    _check_auth(secrets.get("auth"))
    return TeamSettings(True, *_bfr_settings(secrets.get("bfr", {})))


def _check_auth(auth: Any) -> None:
    where = f"{SECRETS} [auth]"
    if not isinstance(auth, Mapping):
        raise TeamSettingsError(f"team mode is on ({TEAM_ENV}) but {SECRETS} has no [auth] table; the app "
                                  "stays closed (README, 'Who may do what')")
    missing = [k for k in AUTH_KEYS if not _text(auth.get(k))]
    providers = {"": auth} | {k: v for k, v in auth.items() if isinstance(v, Mapping)}
    complete = [name for name, p in providers.items() if all(_text(p.get(k)) for k in PROVIDER_KEYS)]
    if not complete:
        partial = next((p for p in providers.values() if any(k in p for k in PROVIDER_KEYS)), auth)
        missing += [k for k in PROVIDER_KEYS if not _text(partial.get(k))]
    if missing:
        raise TeamSettingsError(f"{where} lacks {', '.join(missing)} (or has them empty); the app stays closed")


def _bfr_settings(bfr: Any) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    where = f"{SECRETS} [bfr]"
    if not isinstance(bfr, Mapping):
        raise TeamSettingsError(f"{where} must be a table; the app stays closed")
    claim = bfr.get("identity_claim", "email")
    if not _text(claim):
        raise TeamSettingsError(f"{where} identity_claim must be a claim name (text); the app stays closed")
    return claim.strip(), _users(bfr, "model_users", where), _users(bfr, "leads", where)


def _users(bfr: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
    """A list of user names (e-mail addresses) of the ``[bfr]`` table, lower-cased; ``["*"]`` = everyone."""
    users = bfr.get(key, [])
    if not isinstance(users, list | tuple) or not all(isinstance(u, str) for u in users):
        raise TeamSettingsError(f"{where} {key} must be a list of e-mail addresses; the app stays closed")
    return tuple(u.strip().lower() for u in users if u.strip())


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def identity_from(user: Mapping[str, Any], claim: str = "email") -> str:
    """The user named by ``claim`` of a login's claims ("" when it is missing or, for ``email``, when
    the provider does not mark it verified). Never falls back to ``name`` or ``sub``: anyone may set
    their display name to a listed address."""
    value = user.get(claim)
    if not _text(value):
        return ""
    if claim == "email" and user.get("email_verified") not in (True, "true", "True"):
        return ""
    return value.strip()
