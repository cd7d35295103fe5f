"""Function-local imports in ``bfr_core`` stay few, each with its reason, and the CLI starts light.

An import inside a function hides a dependency from the reader, so it is kept only where it is
needed: an optional dependency (``# optional dependency: ray``) or a heavy one that loads on first
use (``# heavy: torch loads on first use``). The reason is a comment on the import's own line.
Everything else is imported at module level.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "bfr_core"
LIMIT = 30
REASONS = ("# optional dependency:", "# noqa: F401 - optional dependency:", "# heavy:")
HEAVY = ("torch", "sentence_transformers", "transformers", "spacy", "llama_cpp", "ray", "streamlit",
         "matplotlib", "plotly", "nltk")


def local_imports(src: str) -> list[tuple[int, str]]:
    """(line, text of that line) of every import statement inside a function or lambda of ``src``."""
    lines = src.splitlines()
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if in_function and isinstance(child, ast.Import | ast.ImportFrom):
                found.append((child.lineno, lines[child.lineno - 1]))
            visit(child, in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda))

    visit(ast.parse(src), False)
    return found


def has_reason(line: str) -> bool:
    return any(mark in line for mark in REASONS)


def all_local_imports() -> list[tuple[str, int, str]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        rel = str(path.relative_to(ROOT))
        out += [(rel, line, text) for line, text in local_imports(path.read_text(encoding="utf-8"))]
    return out


def test_the_counter_sees_imports_in_functions_methods_and_lambdas_only():
    src = (
        "import os\n"
        "def f():\n    import json  # heavy: x\n"
        "class C:\n    def m(self):\n        from a import b\n"
        "    import re\n"
        "g = lambda: __import__('x')\n"
        "async def h():\n    if True:\n        import ray  # optional dependency: ray\n"
    )
    assert [line for line, _ in local_imports(src)] == [3, 6, 11]
    assert [has_reason(text) for _, text in local_imports(src)] == [True, False, True]


def test_function_local_imports_are_few():
    found = all_local_imports()
    assert len(found) <= LIMIT, f"{len(found)} function-local imports in bfr_core (at most {LIMIT}): " + "; ".join(
        f"{path}:{line}" for path, line, _ in found)


def test_every_function_local_import_says_why():
    bare = [f"{path}:{line}: {text.strip()}" for path, line, text in all_local_imports() if not has_reason(text)]
    assert not bare, ("a function-local import needs its reason on its line "
                      "('# optional dependency: X' or '# heavy: ...'), else import it at module level: "
                      + "; ".join(bare))


def test_importing_the_cli_loads_no_heavy_module():
    code = ("import sys, bfr_core.cli; "
            f"print(','.join(sorted(m for m in {HEAVY!r} if m in sys.modules)))")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT,
                         check=True).stdout.strip()
    assert out == "", f"import bfr_core.cli loads {out}"


def test_bfr_help_loads_no_heavy_module():
    code = ("import sys, contextlib, io\n"
            "from bfr_core.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n    main(['--help'])\n"
            f"print(','.join(sorted(m for m in {HEAVY!r} if m in sys.modules)))")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT,
                         check=True).stdout.strip()
    assert out == "", f"bfr --help loads {out}"
