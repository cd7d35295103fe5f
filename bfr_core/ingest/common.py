"""Helpers every loader shares: file hashing, safe JSON / JSONL / gzip reading, field checks, dates.

Covers: reading a file that may be gzip-compressed (detected by its magic bytes, not its name),
turning every way that can fail (missing, empty, truncated gzip, bad UTF-8, malformed JSON) into one
:class:`~bfr_core.errors.InputError` that names the file and, where known, the line; typed field
access that names record and field on failure; the three date formats we meet (LoCoMo's
``"1:56 pm on 8 May, 2023"``, LongMemEval's ``"2023/05/20 (Sat) 02:21"``, ISO 8601); id
uniqueness checks so the store never sees a primary-key clash.

Does not cover: streaming JSON parsing (files are read whole; the 277 MB LongMemEval-S file needs a
few GB of RAM), or guessing a file's kind for the user (``sniff_kind`` only sharpens messages).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import re
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from bfr_core.errors import InputError, some

GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 1 << 20
# Largest input text accepted, before or after gunzipping (LongMemEval-M is ~2.7 GB; a gzip bomb is
# refused once its output passes this, without inflating the rest).
MAX_INPUT_BYTES = 4 << 30


def sha256_file(path: str | Path) -> str:
    """SHA-256 of the file as stored (compressed bytes for a ``.gz``)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def sha256_tree(files: Iterable[Path], root: str | Path) -> str:
    """SHA-256 of a folder input: over each file's path relative to ``root`` and its own SHA-256, in
    the order given (the loader's order), so the same files in the same layout give the same hash."""
    base = Path(root)
    h = hashlib.sha256()
    for f in files:
        rel = f.relative_to(base).as_posix() if f != base and base in f.parents else f.name
        h.update(f"{rel}\0{sha256_file(f)}\n".encode())
    return h.hexdigest()


def check_file(path: Path) -> None:
    """InputError unless ``path`` is an existing, non-empty file."""
    if not path.exists():
        raise InputError(str(path), "file not found")
    if path.is_dir():
        raise InputError(str(path), "is a directory, expected a file")
    if path.stat().st_size == 0:
        raise InputError(str(path), "file is empty")


def read_text(path: str | Path) -> str:
    """The whole file as text, gunzipped when it starts with the gzip magic bytes."""
    p = Path(path)
    check_file(p)
    try:
        limit = MAX_INPUT_BYTES
        if p.stat().st_size > limit:
            raise InputError(str(p), f"file is larger than the {limit:,}-byte input limit")
        with open(p, "rb") as fh:
            raw = fh.read()
        if raw[:2] == GZIP_MAGIC:
            with gzip.GzipFile(fileobj=io.BytesIO(raw)) as gz:
                raw = gz.read(limit + 1)
            if len(raw) > limit:
                raise InputError(str(p), f"gzip data expands past the {limit:,}-byte input limit")
        text = raw.decode("utf-8")
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise InputError(str(p), f"gzip data is truncated or corrupt ({exc or type(exc).__name__})") from None
    except UnicodeDecodeError as exc:
        raise InputError(str(p), f"not UTF-8 text (byte {exc.start}: {exc.reason})") from None
    except OSError as exc:
        raise InputError(str(p), f"cannot read file: {exc.strerror or exc}") from None
    if not text.strip():
        raise InputError(str(p), "file is empty (only whitespace)")
    return text.removeprefix("\ufeff")


# JSON may escape half of a UTF-16 pair ("\ud800"); Python reads it into a str that cannot be written
# as UTF-8 (the store refuses it with a traceback), so such a file is refused here, where it is read
_LONE_SURROGATE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
                             r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}")
_LONG_NUMBER = re.compile(r"\d{4301,}")  # past Python's int-from-text limit (4,300 digits)


def _where(text: str, pos: int) -> str:
    line = text.count("\n", 0, pos) + 1
    return f"line {line}, column {pos - (text.rfind(chr(10), 0, pos) + 1) + 1}"


def _check_decoded(text: str) -> str | None:
    """Why text that parsed as JSON cannot be stored (a lone surrogate escape), or None."""
    if "\\ud" not in text and "\\uD" not in text:  # a scan only where such an escape may be
        return None
    m = _LONE_SURROGATE.search(text)
    return None if m is None else (f"{_where(text, m.start())}: {m.group()} is half of a UTF-16 surrogate "
                                   "pair, not a character")


def _number_problem(text: str, exc: ValueError) -> str:
    m = _LONG_NUMBER.search(text)
    where = f"{_where(text, m.start())}: " if m else ""
    return f"{where}a number of more than 4,300 digits ({str(exc).split(':')[0]})"


def load_json(path: str | Path) -> Any:
    """Parse a JSON (optionally gzipped) file; a syntax error names its line and column."""
    text = read_text(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        hint = ""
        if exc.msg == "Extra data" and _first_line_is_object(text):
            hint = " (this looks like JSON Lines: try 'bfr ingest jsonl')"
        raise InputError(
            str(path), f"malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}{hint}"
        ) from None
    except RecursionError:
        raise InputError(str(path), "JSON is nested too deeply to read") from None
    except ValueError as exc:  # an integer past Python's digit limit
        raise InputError(str(path), _number_problem(text, exc)) from None
    if problem := _check_decoded(text):
        raise InputError(str(path), problem)
    return data


def _first_line_is_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text.split("\n", 1)[0]), dict)
    except json.JSONDecodeError:
        return False


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, Any]]:
    """``(line_number, object)`` for each non-blank line of a JSON Lines file (1-based numbers)."""
    text = read_text(path)
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(
                str(path), f"malformed JSON at column {exc.colno}: {exc.msg}", record=f"line {lineno}"
            ) from None
        except RecursionError:
            raise InputError(str(path), "JSON is nested too deeply to read", record=f"line {lineno}") from None
        except ValueError as exc:  # an integer past Python's digit limit
            raise InputError(str(path), _number_problem(line, exc).removeprefix("line 1, "),
                             record=f"line {lineno}") from None
        if problem := _check_decoded(line):
            raise InputError(str(path), problem.removeprefix("line 1, "), record=f"line {lineno}")
        yield lineno, obj


MAX_TURN_CHARS = 1_000_000  # spaCy's max_length: the entity view's NER refuses longer texts


def check_turn_lengths(turns: Iterable[Any], path: str | Path) -> None:
    """InputError for the first turn longer than :data:`MAX_TURN_CHARS` (the default ingest would
    stop in its entity step); benchmark turns stay far below it."""
    for t in turns:
        if len(t.text) > MAX_TURN_CHARS:
            raise InputError(str(path), f"{len(t.text):,} characters in one turn; at most {MAX_TURN_CHARS:,} "
                             "(split it into several turns)", record=f"turn {t.turn_id}", field="text")


# -- typed field access ---------------------------------------------------------------------------

_TYPE_NAMES: dict[type, str] = {
    str: "a string", bool: "true/false", int: "an integer", float: "a number", list: "a list",
    dict: "an object",
}


def type_name(value: Any) -> str:
    """How a JSON value's type reads in an error message."""
    return "null" if value is None else _TYPE_NAMES.get(type(value), type(value).__name__)


def expect(value: Any, kind: type | tuple[type, ...], path: str, record: str | None, field: str | None) -> Any:
    """``value`` if it has the expected type (bool is never accepted as int), else InputError."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    ok = isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds)
    if not ok:
        wanted = " or ".join(_TYPE_NAMES.get(k, k.__name__) for k in kinds)
        raise InputError(path, f"expected {wanted}, got {type_name(value)}", record=record, field=field)
    return value


def field(obj: dict[str, Any], key: str, kind: type | tuple[type, ...], path: str, record: str,
          prefix: str = "") -> Any:
    """``obj[key]`` checked for presence and type; the error names ``prefix + key``."""
    name = f"{prefix}{key}"
    if key not in obj:
        raise InputError(path, "missing required field", record=record, field=name)
    return expect(obj[key], kind, path, record, name)


def answer_text(value: Any, path: str, record: str, name: str = "answer") -> str:
    """Answers are usually strings, sometimes numbers: store them as text."""
    expect(value, (str, int, float), path, record, name)
    return value if isinstance(value, str) else str(value)


# -- dates ------------------------------------------------------------------------------------------

# -- integrity --------------------------------------------------------------------------------------


def duplicates(ids: Iterable[str]) -> list[str]:
    """Ids that occur more than once, in first-seen order."""
    counts = Counter(ids)
    return [i for i, n in counts.items() if n > 1]


def require_unique(ids: Iterable[str], what: str, path: str) -> None:
    dup = duplicates(ids)
    if dup:
        raise InputError(path, f"{len(dup)} duplicate {what} id(s): {some(dup)}")


def sniff_kind(data: Any) -> str | None:
    """Which benchmark a parsed top-level JSON value looks like, to sharpen 'wrong format' errors."""
    first = data[0] if isinstance(data, list) and data else None
    if isinstance(first, dict):
        if "conversation" in first and "qa" in first:
            return "locomo"
        if "haystack_sessions" in first and "question_id" in first:
            return "longmemeval"
    if isinstance(data, dict) and "type" in data:
        return "jsonl"
    return None


def looks_like(data: Any, keys: tuple[str, ...]) -> bool:
    """A non-empty list whose first item is an object with at least one of ``keys``."""
    return isinstance(data, list) and bool(data) and isinstance(data[0], dict) and any(k in data[0] for k in keys)


def wrong_format(path: str, expected: str, shape: str, data: Any) -> InputError:
    """The error for a file that parsed as JSON but is not the expected benchmark."""
    guess = sniff_kind(data)
    if guess:
        hint = f"it looks like a {guess} file (try: bfr ingest {guess} ...)"
    else:
        first = data[0] if isinstance(data, list) and data else None
        hint = f"top level is {type_name(data)}" + (f" whose first item is {type_name(first)}" if first is not None else "")
    return InputError(path, f"not a {expected} file (expected {shape}); {hint}")
