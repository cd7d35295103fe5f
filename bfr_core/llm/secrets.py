"""The one home of key redaction: no API key, whole or in part, gets past a provider into the project.

Covers: :func:`configured_keys` (every key the process is configured with: the providers' keys in
the environment and ``.streamlit/secrets.toml``, any other ``*_API_KEY`` variable, and every
key / secret / token / password value of secrets.toml), :class:`Redactor` (replaces each token of a
text that holds a fragment of one of them, or looks like a key, by ``***``) and
:class:`ScrubbedLLM`, the wrapper ``factory.make_provider`` puts around every networked or local
backend, so provider errors and replies are scrubbed before the retry layer logs them, the cache
stores them, a trace, a result row or the call log holds them, or the CLI and the app show them.

What counts as a fragment of a key ``k`` (``len(k) >= 8``), in a token as written, URL-decoded,
reversed or base64-decoded: any 10 characters of ``k`` in a row (the whole key included); its
first 6 characters at the start of a word; its last 4 at the end of a word (OpenAI's 401 says
``sk-proj-****...5e6f``). Key-shaped tokens are scrubbed whatever the configuration: ``sk-`` and
6+ key characters after it (``sk-proj-``, ``sk-ant-`` included). A token is a run of key, mask,
base64 and URL-encoding characters, so JSON quotes and sentence spaces around it survive.
A key written with spaces or tabs between its characters (``s k - p r o j ...``, or in groups) is
found too: in a run of short tokens (at most :data:`SPACED_TOKEN` characters each) separated by
spaces or tabs, read without the spaces, any 10 characters of a configured key in a row mask every
token they touch (a key-shaped ``sk-`` run is not looked for across spaces: read so, it would run on
into the words after it).

Does not cover: keys split by line breaks or other characters, or encoded twice; prompts (the project's own data, sent
out, never a key); the offline rules backend, which reads no key and calls nothing.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from urllib.parse import unquote

from bfr_core.errors import BfrError
from bfr_core.llm.base import LLM, LLMConfigError, LLMRequest, LLMResponse, ProviderError, Secret

MASK = "***"
MIN_KEY = 8  # shorter values are placeholders ("no-key"), not keys
WINDOW = 10  # any run this long of a key is the key
PREFIX = 6  # a key's first characters, at the start of a word
SUFFIX = 4  # a key's last characters, at the end of a word (what providers print after a mask)
_TOKEN = re.compile(r"[A-Za-z0-9_\-+/=%*.~]+")
_KEY_SHAPED = re.compile(r"(?<![A-Za-z0-9])sk-[A-Za-z0-9_\-*.]{6,}")
_B64 = re.compile(r"[A-Za-z0-9+/_-]{8,}={0,2}")
_SECRET_NAMES = re.compile(r"key|secret|token|password", re.I)
SPACED_TOKEN = 8  # tokens this short, separated by spaces, may be one key written apart
_TC = r"[A-Za-z0-9_\-+/=%*.~]"
_SPACED = re.compile(rf"(?<!{_TC}){_TC}{{1,{SPACED_TOKEN}}}(?:[ \t]+{_TC}{{1,{SPACED_TOKEN}}})+(?!{_TC})")
_GAP = re.compile(r"[ \t]+")


class Redactor:
    """``redactor(text)``: ``text`` with every token holding a key fragment, or shaped like a key, as
    ``***``. Prints as a count; cannot be pickled (it holds the keys)."""

    __slots__ = ("_checks",)

    def __init__(self, keys: Iterable[str | Secret] = ()) -> None:
        values = {(k.reveal() if isinstance(k, Secret) else str(k)).strip() for k in keys}
        self._checks = tuple(_checks(k) for k in sorted(v for v in values if len(v) >= MIN_KEY))

    def __call__(self, text: str) -> str:
        if not text:
            return text
        text = _SPACED.sub(self._spaced, text)
        return _TOKEN.sub(lambda m: MASK if self.leaks(m.group()) else m.group(), text)

    def _spaced(self, run: re.Match[str]) -> str:
        """A run of short space-separated tokens with each token masked that a key fragment, read across
        the spaces, touches."""
        parts = _GAP.split(run.group())
        joined = "".join(parts)
        hit = bytearray(len(joined))
        for windows, _, _ in self._checks:
            for i in range(len(joined) - WINDOW + 1):
                if joined[i : i + WINDOW] in windows:
                    hit[i : i + WINDOW] = b"\1" * WINDOW
        if not any(hit):
            return run.group()
        gaps = _GAP.findall(run.group()) + [""]
        out, at = [], 0
        for part, gap in zip(parts, gaps, strict=True):
            out.append((MASK if any(hit[at : at + len(part)]) else part) + gap)
            at += len(part)
        return "".join(out)

    def leaks(self, token: str) -> bool:
        """Whether ``token`` (one run of key-like characters) holds a key fragment in any form."""
        return any(_KEY_SHAPED.search(v) or any(_holds(v, c) for c in self._checks) for v in _views(token))

    def __repr__(self) -> str:
        return f"Redactor({len(self._checks)} keys)"

    def __reduce__(self) -> tuple:
        raise TypeError("Redactor cannot be pickled")


def _checks(key: str) -> tuple[frozenset[str], re.Pattern[str], re.Pattern[str]]:
    windows = frozenset(key[i : i + WINDOW] for i in range(max(1, len(key) - WINDOW + 1)))
    head = re.compile(r"(?<![A-Za-z0-9])" + re.escape(key[:PREFIX]))
    tail = re.compile(re.escape(key[-SUFFIX:]) + r"(?![A-Za-z0-9])")
    return windows, head, tail


def _holds(view: str, check: tuple[frozenset[str], re.Pattern[str], re.Pattern[str]]) -> bool:
    windows, head, tail = check
    if len(view) >= WINDOW and any(view[i : i + WINDOW] in windows for i in range(len(view) - WINDOW + 1)):
        return True
    return bool(head.search(view) or tail.search(view))


def _views(token: str) -> list[str]:
    """The token as written, reversed, URL-decoded and base64-decoded (each way that decodes)."""
    out = [token, token[::-1]]
    if "%" in token:
        out.append(unquote(token))
    core = token.strip(".")  # a sentence's full stop is not part of the encoding
    if _B64.fullmatch(core):
        body = core.rstrip("=")
        padded = body + "=" * (-len(body) % 4)
        for decode in (base64.b64decode, base64.urlsafe_b64decode):
            try:
                out.append(decode(padded).decode("latin-1"))
            except (binascii.Error, ValueError):
                continue
    return out


def scrub(text: str, keys: Iterable[str | Secret] = ()) -> str:
    """``Redactor(keys)(text)`` for a one-off message."""
    return Redactor(keys)(text)


# -- which keys are configured ----------------------------------------------------------------
ENV_KEYS = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
SECRETS_FILE = Path(".streamlit") / "secrets.toml"
_REPO_ROOT = Path(__file__).resolve().parents[2]


def secrets_candidates(path: str | Path | None) -> list[Path]:
    """Where secrets.toml is looked for: ``path``, else the working folder's, then the repo's."""
    if path is not None:
        return [Path(path)]
    return list(dict.fromkeys([Path.cwd() / SECRETS_FILE, _REPO_ROOT / SECRETS_FILE]))


def read_secrets(path: Path) -> dict:
    """secrets.toml as a dict; an error that says only where (a parse error may quote a key)."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        raise LLMConfigError(f"cannot read {path}: not valid TOML") from None


def _secret_values(data: object, name: str = "") -> Iterable[str]:
    if isinstance(data, dict):
        for k, v in data.items():
            yield from _secret_values(v, str(k))
    elif isinstance(data, list):
        for v in data:
            yield from _secret_values(v, name)
    elif isinstance(data, str) and _SECRET_NAMES.search(name):
        yield data


def configured_keys(*, env: Mapping[str, str] | None = None, secrets_path: str | Path | None = None) -> list[str]:
    """Every key this process is configured with (see the module docstring); unreadable files add none."""
    env = os.environ if env is None else env
    keys = [v for k, v in env.items() if k.endswith("_API_KEY")]  # ENV_KEYS among them
    for path in secrets_candidates(secrets_path):
        if path.is_file():
            try:
                keys += list(_secret_values(read_secrets(path)))
            except BfrError:
                continue
    return [k.strip() for k in keys if k and len(k.strip()) >= MIN_KEY]


# -- the boundary -------------------------------------------------------------------------------
class ScrubbedLLM:
    """A backend whose replies and errors pass through ``redactor`` (innermost wrapper)."""

    def __init__(self, inner: LLM, redactor: Redactor) -> None:
        self.inner, self._redact = inner, redactor
        self.provider, self.model = inner.provider, inner.model

    @property
    def label(self) -> str:
        return self._redact(self.inner.label)

    def __repr__(self) -> str:
        return f"ScrubbedLLM({self.inner!r})"

    def complete(self, request: LLMRequest) -> LLMResponse:
        try:
            resp = self.inner.complete(request)
        except ProviderError as exc:
            raise ProviderError(self._redact(exc.reason), status=exc.status, transient=exc.transient,
                                retry_after=exc.retry_after) from None
        except BfrError:  # the project's own messages (a missing model file, ...)
            raise
        except Exception as exc:  # noqa: BLE001 - anything else a backend raised may quote what it was sent
            raise ProviderError(self._redact(f"{self.provider}: {type(exc).__name__}: {exc}")[:300]) from None
        return replace(resp, text=self._redact(resp.text))
