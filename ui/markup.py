"""The one place stored or user-given strings become Markdown (no streamlit import).

Every string the app did not write itself (dataset, system, arm and annotator names, store paths,
questions, turns, error messages quoting any of these, commands naming them) reaches a Markdown
element through :func:`text` (ordinary text) or :func:`code` (an inline code span). Streamlit's
Markdown renders images, links, HTML-like tags, LaTeX and its own directives (``:red[...]``,
``:material/...:``); a name holding ``![x](http://host/i.png)`` would otherwise make the browser
fetch from another machine, and a name with a backtick would end a code span early.

* :func:`text`: every ASCII punctuation character those syntaxes use is backslash-escaped; a line
  break stays a line break.
* :func:`code`: the string verbatim inside a code span whose fence is longer than any run of
  backticks in it (CommonMark), so a copied command or id is the real one, never escaped inside.
  A code span cannot hold a blank line, so line breaks become spaces.
"""

from __future__ import annotations

import re

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$&:=^\"'])")
_TICKS = re.compile(r"`+")


def text(value: object) -> str:
    """``value`` as Markdown text that renders as itself: no link, image, tag, formula or directive."""
    return _MD_SPECIAL.sub(r"\\\1", str(value)).replace("\n", "  \n")


def code(value: object) -> str:
    """``value`` as an inline code span that renders (and copies) as itself."""
    s = " ".join(str(value).splitlines()) or " "
    fence = "`" * (max((len(m) for m in _TICKS.findall(s)), default=0) + 1)
    pad = " " if s[0] == "`" or s[-1] == "`" or (s[0] == " " and s[-1] == " " and s.strip()) else ""
    return f"{fence}{pad}{s}{pad}{fence}"
