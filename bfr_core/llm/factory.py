"""``make_llm(config, store)``: the one way the rest of the project gets an LLM client.

Covers: choosing the backend from :class:`~bfr_core.config.LLMConfig` (rules | anthropic | openai |
local), finding API keys (environment ``ANTHROPIC_API_KEY`` / ``OPENAI_API_KEY`` first, then
``.streamlit/secrets.toml``, top-level or under ``[anthropic]`` / ``[openai]`` as ``api_key``), and
stacking the wrappers: cache (outermost, so a rerun makes no provider call and takes no semaphore
slot) -> retries held to the provider's limits (``limits.py``: concurrency, requests and tokens per
minute, shared by every client of one endpoint) -> provider.

Keys are held in :class:`~bfr_core.llm.base.Secret` and only revealed to the SDK constructor; they
are never logged, never part of a repr, an error message, the store or an export. Every backend but
the offline rules comes wrapped in :class:`~bfr_core.llm.secrets.ScrubbedLLM`, which takes every
configured key (and anything shaped like one) out of its replies and errors.

"The provider as configured" has one home, :func:`configured`: the ``[llm]`` table of the config
file in force (``bfr_core.config.config_path``: ``$BFR_CONFIG``, else ``bfr.toml`` in the repository
folder) for the provider a page or command names. Every page (Trace, Evaluate) and command
(``bfr eval``, its judges and adjudicator) reads its settings there, so a self-hosted server named by
``base_url`` is the one every call goes to.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path

from bfr_core.config import LLMConfig, config_path, load_config
from bfr_core.llm.anthropic_provider import AnthropicLLM
from bfr_core.llm.base import LLM, LLMConfigError, Secret
from bfr_core.llm.cache import CachedLLM, LLMCache
from bfr_core.llm.limits import Limits, ProviderLimiter, limiter_for
from bfr_core.llm.local_provider import LocalLLM
from bfr_core.llm.openai_provider import OpenAILLM
from bfr_core.llm.retry import RetryingLLM, RetryPolicy
from bfr_core.llm.rules import RulesLLM
from bfr_core.llm.secrets import (
    ENV_KEYS,
    Redactor,
    ScrubbedLLM,
    configured_keys,
    read_secrets,
    secrets_candidates,
)
from bfr_core.store import Store

PROVIDERS = ("rules", "anthropic", "openai", "local")
# settings of any provider; the rest of [llm] (model, base_url, concurrency, rpm, tpm) belong to the
# provider the file names and never carry over to another one
_GENERAL = ("temperature", "timeout_s", "max_retries")


def file_config(path: str | Path | None = None, *, env: Mapping[str, str] | None = None) -> LLMConfig:
    """The ``[llm]`` table of ``path`` (default: the config file in force; the defaults without one);
    a file that cannot be read or holds a bad key raises a one-line :class:`LLMConfigError`."""
    path = config_path(env) if path is None else Path(path)
    if path is None:
        return LLMConfig()
    try:
        return load_config(path).llm
    except OSError as exc:
        raise LLMConfigError(f"config file {path}: {exc.strerror or exc}") from None
    except (ValueError, TypeError) as exc:  # tomllib.TOMLDecodeError is a ValueError
        raise LLMConfigError(f"config file {path}: {exc}") from None


def configured(spec: str = "", path: str | Path | None = None, *, env: Mapping[str, str] | None = None) -> LLMConfig:
    """The settings of provider ``spec`` (``PROVIDER[:MODEL]``; empty: the file's own provider) as the
    config file gives them: the file's whole ``[llm]`` table when it names that provider (``MODEL``,
    when given, replacing its model), else that provider's defaults with the file's general settings
    (temperature, timeout, retries). ``rules`` is always the offline rules."""
    base = file_config(path, env=env)
    name, _, model = spec.partition(":")
    name, model = name.strip().lower(), model.strip()
    if not name or name == base.provider.strip().lower():
        return replace(base, model=model) if model else base
    general = {k: getattr(base, k) for k in _GENERAL}
    return LLMConfig(provider=name, model=model, **general)


def config_label(config: LLMConfig) -> str:
    """``provider:model`` (``provider`` alone for its default model): how pages list a provider and
    :func:`configured` reads it back."""
    return f"{config.provider}:{config.model}" if config.model else config.provider


def api_key(provider: str, *, env: Mapping[str, str] | None = None,
            secrets_path: str | Path | None = None) -> Secret | None:
    """The provider's key from the environment or secrets.toml; None when there is none."""
    name = ENV_KEYS[provider]
    env = os.environ if env is None else env
    if env.get(name):
        return Secret(env[name].strip())
    for path in secrets_candidates(secrets_path):
        if not path.is_file():
            continue
        data = read_secrets(path)
        section = data.get(provider)
        value = data.get(name) or (section.get("api_key") if isinstance(section, dict) else None)
        if value:
            return Secret(str(value).strip())
    return None


def make_provider(config: LLMConfig, *, env: Mapping[str, str] | None = None,
                  secrets_path: str | Path | None = None) -> LLM:
    """The backend (no cache, no retries); a model's replies and errors come out of it scrubbed of
    every configured key (``secrets.ScrubbedLLM``). The offline rules read no key and call nothing."""
    name = config.provider.strip().lower()
    if name == "rules":
        return RulesLLM()
    return ScrubbedLLM(_backend(name, config, env, secrets_path),
                       Redactor(configured_keys(env=env, secrets_path=secrets_path)))


def _backend(name: str, config: LLMConfig, env: Mapping[str, str] | None, secrets_path: str | Path | None) -> LLM:
    if name == "local":
        try:
            return LocalLLM(config.model)
        except ImportError as exc:  # llama-cpp-python not installed: say how to get it, in one line
            raise LLMConfigError(str(exc)) from None
    if name not in ENV_KEYS:
        raise LLMConfigError(f"unknown LLM provider '{config.provider}'; choose one of {', '.join(PROVIDERS)}")
    key = api_key(name, env=env, secrets_path=secrets_path)
    if name == "anthropic":
        if key is None and not config.base_url:
            raise LLMConfigError(
                "no Anthropic API key: set ANTHROPIC_API_KEY or add it to .streamlit/secrets.toml"
            )
        return AnthropicLLM(config.model, api_key=key or Secret("no-key-needed"), base_url=config.base_url,
                            timeout_s=config.timeout_s)

    if key is None and not config.base_url:
        raise LLMConfigError(
            "no OpenAI API key: set OPENAI_API_KEY or add it to .streamlit/secrets.toml "
            "(a self-hosted OpenAI-compatible server needs only base_url)"
        )
    return OpenAILLM(config.model, api_key=key, base_url=config.base_url, timeout_s=config.timeout_s)


def make_llm(
    config: LLMConfig, store: Store, *, run_id: str | None = None, env: Mapping[str, str] | None = None,
    secrets_path: str | Path | None = None, policy: RetryPolicy | None = None,
    sleep: Callable[[float], None] = time.sleep, provider: LLM | None = None,
) -> CachedLLM:
    """A cached, retried, concurrency-limited client for ``config``; calls are logged under ``run_id``.

    ``provider`` replaces the backend ``config`` names (tests pass a counting fake).
    """
    inner = provider or make_provider(config, env=env, secrets_path=secrets_path)
    policy = policy or RetryPolicy(max_retries=config.max_retries)
    slots = 1 if inner.provider == "local" else config.concurrency
    # one limiter per endpoint in the process: every client of one provider shares its limits
    # (a test's injected sleep gets a limiter of its own, so it never waits on the clock)
    limits = Limits(max_concurrent=slots, rpm=config.rpm, tpm=config.tpm)
    limiter = limiter_for(inner.label, limits) if sleep is time.sleep else ProviderLimiter(limits, sleep=sleep)
    retrying = RetryingLLM(inner, policy, concurrency=slots, sleep=sleep, limiter=limiter)
    return CachedLLM(retrying, LLMCache(store), run_id=run_id)
