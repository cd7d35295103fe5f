"""How ``bench/`` is laid out, read from file texts (a work tree's or a git revision's): which bench files
edit ``sys.path`` (:data:`PATH_EDIT`) or carry ``noqa: E402``, which bench modules import a bench script, which tests import
bench code and whether only from ``bench.lib``.

A bench script is a module of ``bench/quality``, ``bench/speed``, ``bench/checks`` or ``bench/archive``,
or any bench file imported by its bare name (possible only with a ``bench/`` folder on ``sys.path``).
Imports are read from the syntax tree, function-local ones included.

Does not cover: whether a script runs (``--help`` of each, as the layout's commit messages record).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from pathlib import PurePosixPath

PACKAGES = ("quality", "speed", "checks", "lib", "archive")
SCRIPTS = ("quality", "speed", "checks", "archive")  # bench code nothing may import
# An edit of the import path: insert / append / extend, a slice assigned, or the list rebound
NOQA_E402 = re.compile(r"#\s*noqa:[^\n]*\bE402\b")  # the comment, not a mention of it
PATH_EDIT = re.compile(r"\bsys\.path\s*(\.(insert|append|extend)\(|\[[^\]]*\]\s*=|\+?=)")


def is_bench_file(path: str) -> bool:
    """A Python file of ``bench/`` that is code (not a record under ``bench/out/``)."""
    parts = PurePosixPath(path).parts
    return len(parts) >= 2 and parts[0] == "bench" and parts[1] != "out" and path.endswith(".py")


def bench_stems(paths: list[str]) -> set[str]:
    """The module names of bench files, as a bare import would name them."""
    return {PurePosixPath(p).stem for p in paths if is_bench_file(p)} - {"__init__"}


def imports(text: str) -> list[tuple[int, str]]:
    """Every imported module name (``from m import n`` gives ``m.n``) with its line, function-local ones included."""
    out = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
    return out


def script_module(name: str) -> bool:
    """``name`` is (inside) a module of a bench package nothing may import."""
    parts = name.split(".")
    return len(parts) >= 2 and parts[0] == "bench" and parts[1] in SCRIPTS


def bare_bench_module(name: str, stems: set[str]) -> bool:
    """``name`` imports a bench file by its bare name."""
    return name.split(".")[0] in stems


def bench_code(name: str, stems: set[str]) -> bool:
    """``name`` is bench code, under ``bench.`` or by a bench file's bare name."""
    return name.split(".")[0] == "bench" or bare_bench_module(name, stems)


def outside_lib(name: str, stems: set[str]) -> bool:
    """``name`` is bench code that is not ``bench.lib``."""
    return bench_code(name, stems) and name.split(".")[:2] != ["bench", "lib"]


def bench_script_imports(files: Mapping[str, str]) -> list[str]:
    """``path:line name`` of every import of a bench script by bench code."""
    stems = bench_stems(list(files))
    return [f"{p}:{line} {name}" for p, text in sorted(files.items()) if is_bench_file(p)
            for line, name in imports(text) if script_module(name) or bare_bench_module(name, stems)]


def imports_in_tests(files: Mapping[str, str], *, outside: bool) -> list[str]:
    """``path:line name`` of every import of bench code by a test file (``outside``: only code outside bench.lib)."""
    stems = bench_stems(list(files))
    keep = outside_lib if outside else bench_code
    return [f"{p}:{line} {name}" for p, text in sorted(files.items())
            if p.startswith("tests/") and p.endswith(".py")
            for line, name in imports(text) if keep(name, stems)]


def counts(files: Mapping[str, str]) -> dict[str, object]:
    """The layout's figures over ``files`` (repository path -> text)."""
    bench = {p: t for p, t in files.items() if is_bench_file(p)}
    path_lines = {p: sum(bool(PATH_EDIT.search(line)) for line in t.splitlines()) for p, t in bench.items()}
    script_imports = bench_script_imports(files)
    tests_any = imports_in_tests(files, outside=False)
    tests_outside = imports_in_tests(files, outside=True)
    per_package = {pkg: sum(PurePosixPath(p).parts[1] == pkg and not p.endswith("__init__.py") for p in bench)
                   for pkg in PACKAGES}
    return {
        "bench_files": len(bench),
        "loose_files": sum(len(PurePosixPath(p).parts) == 2 and not p.endswith("__init__.py") for p in bench),
        "per_package": per_package,
        "sys_path_lines": sum(path_lines.values()),
        "sys_path_files": sum(n > 0 for n in path_lines.values()),
        "noqa_e402": sum(len(NOQA_E402.findall(t)) for t in bench.values()),
        "bench_script_imports": len(script_imports),
        "bench_files_importing_a_script": len({s.split(":")[0] for s in script_imports}),
        "test_files_importing_bench_code": len({s.split(":")[0] for s in tests_any}),
        "test_files_importing_outside_lib": len({s.split(":")[0] for s in tests_outside}),
    }
