"""Helpers every loader shares: file hashing, safe JSON / JSONL / gzip reading, field checks, dates.

Covers: reading a file that may be gzip-compressed (detected by its magic bytes, not its name),
turning every way that can fail (missing, empty, truncated gzip, bad UTF-8, malformed JSON) into one
:class:`~bfr_core.errors.InputError` that names the file and, where known, the line; typed field
access that names record and field on failure; the three date formats we meet (LoCoMo's
``"1:56 pm on 8 May, 2023"``, LongMemEval's ``"2023/05/20 (Sat) 02:21"``, ISO 8601); id
uniqueness checks so the store never sees a primary-key clash.

Streaming: :class:`JsonArray` reads a file whose top level is an array one item at a time (ijson's
C parser), for a file too large to hold whole (LongMemEval-M, 2.7 GB); it keeps the same guarantees
(gzip, BOM, lone surrogates, nesting, one InputError naming the file, the item and the byte range).
:func:`iter_lines` reads a text file one line at a time (gzip, BOM, UTF-8 checked per line, the
gzip bomb limit) and :func:`iter_jsonl` parses JSON Lines through it, so memory holds a line, not
the file (``bfr ingest jsonl``, ``bfr import-run``).

Does not cover: streaming a whole-file JSON document that is not a top-level array (LoCoMo's and
BEAM's loaders read files whole), or guessing a file's kind for the user (``sniff_kind`` only
sharpens messages).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import math
import re
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any, BinaryIO

import ijson

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


class _NotFinite(ValueError):
    """A JSON text that Python's json accepts but JSON does not (NaN, Infinity, a number past a double)."""


def _constant(name: str) -> Any:
    raise _NotFinite(f"{name} is not JSON (it has no NaN or Infinity)")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _NotFinite(f"the number {text[:24]} is beyond a double's range")
    return value


def strict_loads(text: str) -> Any:
    """``json.loads`` that refuses what JSON itself does not allow (``NaN``, ``Infinity``, ``1e999``),
    as the streaming reader does: a stored answer never becomes "nan" or "inf"."""
    return json.loads(text, parse_constant=_constant, parse_float=_finite)


def load_json(path: str | Path) -> Any:
    """Parse a JSON (optionally gzipped) file; a syntax error names its line and column."""
    text = read_text(path)
    try:
        data = strict_loads(text)
    except _NotFinite as exc:
        raise InputError(str(path), str(exc)) from None
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


# -- streaming a top-level array ------------------------------------------------------------------

# Deepest nesting :class:`JsonArray` builds (json.loads stops near 1,000 with a RecursionError; a
# LongMemEval item is 4 levels deep). ijson's own ``items`` was not used: it builds a prefix string per
# level for every event, so 200,000 nested brackets exhausted the machine's memory (the kernel killed it).
MAX_DEPTH = 500
_BOM = b"\xef\xbb\xbf"
_LONE_SURROGATE_BYTES = re.compile(_LONE_SURROGATE.pattern.encode())
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")  # where the slow full pattern (look-arounds) is tried
_GZIP_ERRORS = (EOFError, gzip.BadGzipFile, zlib.error)


class _Stored:
    """The file's bytes as stored, counted (progress) and hashed (sha256) as they are read."""

    def __init__(self, fh: BinaryIO) -> None:
        self.fh, self.done, self.hash = fh, 0, hashlib.sha256()

    def read(self, n: int = -1) -> bytes:
        chunk = self.fh.read(n)
        self.done += len(chunk)
        self.hash.update(chunk)
        return chunk


class _Text:
    """The JSON text handed to the parser: gunzipped, BOM dropped, scanned for lone surrogate escapes
    (ijson's C parser turns one into ``?`` silently; the whole-file reader refuses it). Gunzipped text
    past :data:`MAX_INPUT_BYTES` is refused (a gzip bomb: a small upload, unbounded work); a plain
    file's size is its own bound, so it has none."""

    def __init__(self, path: str, source: Any, gz: bool) -> None:
        self.path, self.source, self.gz = path, source, gz
        self.start = self.done = 0  # the last chunk handed on: text bytes [start, done)
        self.blank = True  # only whitespace so far
        self._fresh = True  # nothing read yet (a BOM may come)
        self._behind = b""  # the last 6 bytes handed on (the scan's look-behind)
        self._held = b""  # bytes read but not handed on: the scan has not judged them yet

    def read(self, n: int = -1) -> bytes:
        if n == 0:  # ijson's probe for bytes or text
            return b""
        while True:
            chunk = self.source.read(n)
            if self._fresh:
                while len(chunk) < len(_BOM) and (more := self.source.read(n)):
                    chunk += more
                chunk, self._fresh = chunk.removeprefix(_BOM), False
            out = self._judged(chunk)
            if out or not chunk:  # b"" only at the end of the text: the parser takes it for the end
                break
        self.start, self.done = self.done, self.done + len(out)
        if self.gz and self.done > MAX_INPUT_BYTES:
            raise InputError(self.path, f"gzip data expands past the {MAX_INPUT_BYTES:,}-byte input limit")
        self.blank = self.blank and not out.strip()
        return out

    def _judged(self, chunk: bytes) -> bytes:
        """The bytes the lone-surrogate scan has judged, up to the end of ``chunk`` but the last 11 (or
        all at the end of the text); InputError at a lone escape. The pattern looks 6 bytes either side of
        a 6-byte escape, so an escape is judged once the 6 bytes after it have been read."""
        end = not chunk
        ctx = self._behind + self._held + chunk
        ahead = len(ctx) if end else len(ctx) - 11  # escapes starting before this are judged now
        for c in _SURROGATE_ESCAPE.finditer(ctx, len(self._behind)):  # candidates, then the full pattern
            if c.start() >= ahead:
                break
            if m := _LONE_SURROGATE_BYTES.match(ctx, c.start()):
                raise InputError(self.path, f"byte {self.done + c.start() - len(self._behind):,} of the JSON text: "
                                 f"{m.group().decode()} is half of a UTF-16 surrogate pair, not a character")
        cut = max(ahead, len(self._behind))
        out, self._held = ctx[len(self._behind):cut], ctx[cut:]
        self._behind = ctx[max(0, cut - 6):cut]
        return out


def _built(events: Iterator[tuple[str, Any]]) -> Iterator[Any]:
    """The items of a top-level array whose ``start_array`` was read, each built from ijson's basic
    events (numbers as json.loads reads them); RecursionError past :data:`MAX_DEPTH` open containers."""
    stack: list[list[Any]] = []  # open containers, each with its pending key
    for event, value in events:
        if event == "map_key":
            stack[-1][1] = value
            continue
        if event == "end_map" or event == "end_array":
            if not stack:
                return  # the top-level array closed
            value = stack.pop()[0]
            if not stack:
                yield value
            continue
        opens = event == "start_map" or event == "start_array"
        if opens:
            if len(stack) >= MAX_DEPTH:
                raise RecursionError
            value = {} if event == "start_map" else []
        elif type(value) is Decimal:
            value = float(value)  # what json.loads gives (ijson's use_float overflows on ints past 2**63)
        if stack:
            parent, key = stack[-1]
            if type(parent) is list:
                parent.append(value)
            else:
                parent[key] = value
        elif not opens:
            yield value  # a scalar item
        if opens:
            stack.append([value, None])


class JsonArray:
    """A JSON file (gzipped or not: the magic bytes decide) whose top level should be an array, read
    one item at a time with ijson's basic events: memory holds the item being built, not the file.

    Use as a context manager: :meth:`is_array` reads the first event; :meth:`items` yields the
    items and raises one InputError naming the file, the item (``what`` and its 0-based index) and
    the byte range of the text being parsed when it is not well-formed JSON (or is nested deeper
    than :data:`MAX_DEPTH`, or a gzip stream is cut). :attr:`done` of :attr:`size` stored bytes
    have been read (progress); :meth:`sha256` is :func:`sha256_file`'s hash, from the same read.
    Unlike the whole-file reader it has no limit on a plain file's size (gunzipped text keeps the
    bomb limit), and ``NaN`` / ``Infinity`` are refused as JSON (Python's json accepts them)."""

    def __init__(self, path: str | Path, what: str = "item") -> None:
        self.path, self.what = Path(path), what
        check_file(self.path)
        self.size = self.path.stat().st_size
        self._first: str | None = None

    def __enter__(self) -> JsonArray:
        self._fh = open(self.path, "rb")  # noqa: SIM115 - closed in __exit__
        gz = self._fh.read(2) == GZIP_MAGIC
        self._fh.seek(0)
        self._stored = _Stored(self._fh)
        source = gzip.GzipFile(fileobj=self._stored) if gz else self._stored  # type: ignore[arg-type]
        self._text = _Text(str(self.path), source, gz)
        self._events = ijson.basic_parse(self._text)
        return self

    def __exit__(self, *exc: object) -> None:
        self._fh.close()

    @property
    def done(self) -> int:
        return self._stored.done

    def is_array(self) -> bool:
        """Whether the top level is an array (reads its first event)."""
        if self._first is None:
            try:
                self._first = next(self._events)[0]
            except StopIteration:
                self._first = ""
            except (*_GZIP_ERRORS, ijson.JSONError, OSError, ValueError) as exc:
                raise self._error(exc, None) from None
        return self._first == "start_array"

    def items(self) -> Iterator[Any]:
        n: int | None = 0
        try:
            if not self.is_array():
                raise InputError(str(self.path), "the top level is not an array")
            for item in _built(self._events):
                yield item
                n += 1  # type: ignore[operator]
            n = None
            for _ in self._events:  # after the array: only whitespace may follow (the parser checks)
                pass
        except RecursionError:
            raise InputError(str(self.path), f"JSON is nested too deeply to read (more than {MAX_DEPTH} levels)",
                             record=f"{self.what} {n}") from None
        except (*_GZIP_ERRORS, ijson.JSONError, OSError, ValueError) as exc:
            raise self._error(exc, n) from None

    def _error(self, exc: Exception, n: int | None) -> InputError:
        p, t = str(self.path), self._text
        if isinstance(exc, _GZIP_ERRORS):
            return InputError(p, f"gzip data is truncated or corrupt ({exc or type(exc).__name__})")
        if isinstance(exc, OSError):
            return InputError(p, f"cannot read file: {exc.strerror or exc}")
        if t.blank:
            return InputError(p, "file is empty (only whitespace)")
        text = exc.args[0] if exc.args else type(exc).__name__
        lines = (text.decode("utf-8", "replace") if isinstance(text, bytes) else str(text)).splitlines() or [""]
        near = f" near {lines[1].strip()!r}" if len(lines) > 2 and lines[1].strip() else ""
        where = f"in bytes {t.start:,}-{t.done:,}" if t.done > t.start else f"at byte {t.done:,}, the end"
        message = f"malformed JSON {where} of the JSON text: {lines[0].strip()}{near}"
        if n is None:
            return InputError(p, message + " (after the top-level array)")
        return InputError(p, message, record=f"{self.what} {n}")

    def sha256(self) -> str:
        """SHA-256 of the stored file (reads whatever the parser left unread)."""
        while self._stored.read(_CHUNK):
            pass
        return self._stored.hash.hexdigest()


def _first_line_is_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text.split("\n", 1)[0]), dict)
    except json.JSONDecodeError:
        return False


def iter_lines(path: str | Path) -> Iterator[tuple[int, str]]:
    """``(line_number, line)`` for each non-blank line of a text file, gunzipped when it starts with the
    gzip magic bytes, read one line at a time (1-based numbers; a BOM before the first is dropped).

    Lines end where ``jsonl.split_lines`` ends them, at "\n" only (a "\r" before it is kept: JSON
    whitespace). One InputError naming the file (and the line) for what :func:`read_text` refuses: a
    missing or empty file, a file or gzip output past :data:`MAX_INPUT_BYTES`, truncated gzip, text
    that is not UTF-8, only whitespace."""
    p = Path(path)
    check_file(p)
    lineno, seen = 0, False
    try:
        with open(p, "rb") as raw:
            gz = raw.read(2) == GZIP_MAGIC
            raw.seek(0)
            if not gz and p.stat().st_size > MAX_INPUT_BYTES:
                raise InputError(str(p), f"file is larger than the {MAX_INPUT_BYTES:,}-byte input limit")
            source: BinaryIO = gzip.GzipFile(fileobj=raw) if gz else raw  # type: ignore[assignment]
            read = 0
            for lineno, data in enumerate(source, start=1):
                read += len(data)
                if gz and read > MAX_INPUT_BYTES:
                    raise InputError(str(p), f"gzip data expands past the {MAX_INPUT_BYTES:,}-byte input limit")
                if lineno == 1:
                    data = data.removeprefix(_BOM)
                try:
                    line = data.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise InputError(str(p), f"not UTF-8 text (byte {exc.start} of the line: {exc.reason})",
                                     record=f"line {lineno}") from None
                line = line.removesuffix("\n")
                if line.strip():
                    seen = True
                    yield lineno, line
    except _GZIP_ERRORS as exc:
        raise InputError(str(p), f"gzip data is truncated or corrupt ({exc or type(exc).__name__})") from None
    except OSError as exc:
        raise InputError(str(p), f"cannot read file: {exc.strerror or exc}") from None
    if not seen:
        raise InputError(str(p), "file is empty (only whitespace)")


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, Any]]:
    """``(line_number, object)`` for each non-blank line of a JSON Lines file (1-based numbers), read
    one line at a time (:func:`iter_lines`).

    Lines end where ``jsonl.split_lines`` ends them, at "\n" only: U+2028, U+2029 and U+0085, which
    ``str.splitlines`` also breaks at, are ordinary characters inside a JSON string."""
    for lineno, line in iter_lines(path):
        try:
            obj = strict_loads(line)
        except _NotFinite as exc:
            raise InputError(str(path), str(exc), record=f"line {lineno}") from None
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


WARNING = "warning:"  # how a note the user should act on starts (the Data page shows it as a warning)
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
