"""Comments and docstrings of the product code say what the code does and why, never its history.

Scanned: every comment (``tokenize``) and docstring (``ast``) under ``bfr_core/``, ``ui/``, ``pages/`` and
``app.py``. Strings the app shows its users are neither, so they are not scanned. Flagged:

* a commit id: a 7-40 digit hex word that ``git cat-file`` resolves here, or any 7+ digit hex word beside
  the word "commit" (so a clone without the history still catches it);
* an issue reference: "issue 18", "#18";
* a history phrase: "until now", "moved here from", "unchanged in behaviour", "added for", "no longer",
  "it was 64", "was X before", "previously", "the old home", ...;
* a measured timing: a number followed by ms, s, seconds, min or minutes, outside ````literal```` spans
  and quotations (which show what a bar or a message prints);
* a citation of a bench output (``bench/out/``): the figures belong to the bench JSON and docs/results.md.

Run as a script it prints every finding and the count per kind.
"""

from __future__ import annotations

import ast
import io
import re
import subprocess
import sys
import tokenize
from collections import Counter
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
TREES = ("bfr_core", "ui", "pages")

HEX = re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b")
NEAR_COMMIT = re.compile(r"\bcommit(?:s|ted)?\W{1,3}(?:\w+\W{1,3}){0,2}[0-9a-f]{7,40}\b"
                         r"|\b[0-9a-f]{7,40}\W{1,3}(?:\w+\W{1,3}){0,2}commit\b", re.I)
ISSUE = re.compile(r"\bissues?\s*#?\d+|(?<![\w&])#\d+\b", re.I)
HISTORY = re.compile("|".join([
    r"\buntil now\b", r"\buntil this (?:session|change|commit)\b", r"\bmoved (?:here )?from\b",
    r"\bunchanged in behaviou?r\b", r"\bno change in behaviou?r\b", r"\badded for\b", r"\bno longer\b",
    r"\bused to (?:be|have|take|run|return|read|write|say|call|give)\b", r"\bit was \d",
    r"\bwas(?: \w+){1,2} before\b", r"\bpreviously\b", r"\bformerly\b", r"\bold (?:home|name|names|behaviou?r)\b",
    r"\bre-exports? the old\b", r"\bbefore this (?:change|commit|session|fix)\b", r"\bin git history\b",
    r"\b(?:removed|dropped|added|explored|changed) (?:on )?\d{4}-\d\d-\d\d\b",
    r"\b(?:was|were|has been|have been) (?:changed|moved|renamed)\b", r"\bin the past\b",
    r"\bthe new setting\b", r"\bexplored and dropped\b", r"\bmeasured and removed\b",
]), re.I)
TIMING = re.compile(r"\d(?:[.,]\d+)?\s?(?:ms|min|mins|minutes?|seconds?|secs?)\b|\d(?:\.\d+)?\s(?:s)\b", re.I)
LITERAL = re.compile(r"``.*?``|\"[^\"\n]*\"|“[^”]*”", re.S)
BENCH_OUT = re.compile(r"\bbench/out/")
KINDS = {"issue": ISSUE, "history": HISTORY, "timing": TIMING, "bench output": BENCH_OUT}


class Finding(NamedTuple):
    path: str
    line: int
    kind: str
    text: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.kind}: {self.text!r}"


def sources() -> list[Path]:
    files = [p for tree in TREES for p in (ROOT / tree).rglob("*.py") if "__pycache__" not in p.parts]
    return sorted(files) + [ROOT / "app.py"]


def code_text(src: str) -> list[tuple[int, str]]:
    """Every comment and docstring of ``src`` as (line, text); string literals that are not docstrings
    (the app's own words) are left out."""
    out = [(t.start[0], t.string) for t in tokenize.generate_tokens(io.StringIO(src).readline)
           if t.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                out.append((first.lineno, first.value.value))
    return out


def resolving(words: set[str]) -> set[str]:
    """The words that name an object of this repository's git history (none when git is unavailable)."""
    if not words:
        return set()
    try:
        done = subprocess.run(["git", "cat-file", "--batch-check"], cwd=ROOT, capture_output=True, text=True,
                              input="".join(f"{w}\n" for w in sorted(words)), check=False)
    except OSError:
        return set()
    found = set()
    for line in done.stdout.splitlines():
        name, _, rest = line.partition(" ")
        if rest and not rest.startswith(("missing", "ambiguous")):
            found.add(name)
    hits = {w for w in words if any(f.startswith(w) for f in found)}
    return hits


def findings(text: str, where: str, line: int) -> list[Finding]:
    """The history-like spans of one comment or docstring, except commit ids that need git."""
    out = [Finding(where, line, "commit", m.group(0)) for m in NEAR_COMMIT.finditer(text)]
    for kind, pattern in KINDS.items():
        body = LITERAL.sub(" ", text) if kind == "timing" else text
        out += [Finding(where, line, kind, _around(body, m)) for m in pattern.finditer(body)]
    return out


def _around(text: str, m: re.Match[str]) -> str:
    return " ".join(text[max(0, m.start() - 40):m.end() + 20].split())


def scan() -> list[Finding]:
    out: list[Finding] = []
    hexes: list[tuple[str, int, str]] = []
    for path in sources():
        where = str(path.relative_to(ROOT))
        for line, text in code_text(path.read_text(encoding="utf-8")):
            out += findings(text, where, line)
            hexes += [(where, line, w) for w in HEX.findall(text)]
    known = resolving({w for _, _, w in hexes})
    out += [Finding(where, line, "commit", w) for where, line, w in hexes if w in known]
    return out


def test_the_patterns_catch_history_and_pass_plain_text():
    flagged = "fixed in issue 18 (#18); it was 64 before; moved here from evaluate; took 15.8 s; bench/out/x.json"
    kinds = {f.kind for f in findings(flagged, "x", 1)}
    assert kinds == {"issue", "history", "timing", "bench output"}
    assert {f.kind for f in findings("see commit 43466e8f for why", "x", 1)} == {"commit"}
    plain = ('Retried for ``BFR_LOCK_WAIT_S``; the bar reads "about 1 min 20 s left"; question ``b3c15d39``; '
             "the 1990s; #fff; 3 rounds, 30 new; used to rank the turns")
    assert findings(plain, "x", 1) == []


def test_a_commit_of_this_repository_is_recognised():
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    if not head:
        return  # no git history in this copy: only the "commit" neighbourhood rule applies
    assert resolving({head[:9], "b3c15d39"}) == {head[:9]}


def test_comments_and_docstrings_carry_no_history():
    found = scan()
    assert not found, f"{len(found)} history notes in comments/docstrings:\n" + "\n".join(map(str, found))


if __name__ == "__main__":
    results = scan()
    print("\n".join(map(str, results)))
    print(dict(Counter(f.kind for f in results)), file=sys.stderr)
