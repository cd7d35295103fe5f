"""The layout of ``bench/``: packages run as modules from the repository root, shared code only in
``bench/lib``. No bench file edits ``sys.path``; no bench module imports a script of
``quality/``, ``speed/``, ``checks/`` or ``archive/``; tests import bench code only from ``bench.lib``;
every script of ``quality/``, ``speed/`` and ``checks/`` gives its run line
(``.venv/bin/python -m bench.<package>.<script>``) in its docstring."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
PACKAGES = ("quality", "speed", "checks", "lib", "archive")
SCRIPTS = ("quality", "speed", "checks", "archive")  # bench code nothing may import


def _bench_files() -> list[Path]:
    return sorted(p for p in BENCH.rglob("*.py") if "out" not in p.relative_to(BENCH).parts)


def _imports(path: Path) -> list[tuple[int, str]]:
    """Every imported module name of ``path`` (function-local imports included)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
    return out


def _script_module(name: str) -> bool:
    parts = name.split(".")
    return len(parts) >= 2 and parts[0] == "bench" and parts[1] in SCRIPTS


def _bare_bench_module(name: str) -> bool:
    """A bench file imported by its bare name (only possible with bench/ on sys.path)."""
    stems = {p.stem for p in _bench_files()} - {"__init__"}
    return name.split(".")[0] in stems


def test_bench_is_a_package_of_the_five_subpackages():
    assert (BENCH / "__init__.py").exists()
    for package in PACKAGES:
        assert (BENCH / package / "__init__.py").exists(), package
    loose = [p.name for p in BENCH.glob("*.py") if p.name != "__init__.py"]
    assert not loose, f"bench files outside the subpackages: {loose}"


def test_no_bench_file_edits_sys_path():
    found = [f"{p.relative_to(ROOT)}:{i}" for p in _bench_files()
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if "sys.path" in line]
    assert not found, found


def test_no_bench_module_imports_a_bench_script():
    found = [f"{p.relative_to(ROOT)}:{line} {name}" for p in _bench_files() for line, name in _imports(p)
             if _script_module(name) or _bare_bench_module(name)]
    assert not found, found


def test_tests_import_bench_code_only_from_bench_lib():
    found = [f"{p.relative_to(ROOT)}:{line} {name}" for p in sorted((ROOT / "tests").rglob("*.py"))
             for line, name in _imports(p)
             if (name.split(".")[0] == "bench" and name.split(".")[:2] != ["bench", "lib"])
             or _bare_bench_module(name)]
    assert not found, found


def test_every_script_gives_its_run_line():
    missing = []
    for package in ("quality", "speed", "checks"):
        for path in sorted((BENCH / package).glob("*.py")):
            if path.name == "__init__.py":
                continue
            doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
            if f"-m bench.{package}.{path.stem}" not in doc:
                missing.append(str(path.relative_to(ROOT)))
    assert not missing, missing


def test_the_checks_see_what_they_forbid(tmp_path):
    script = tmp_path / "x.py"
    script.write_text("import sys\nfrom bench.quality import bench_ours\n\ndef f():\n    import bench_msize\n")
    names = [name for _, name in _imports(script)]
    assert _script_module("bench.quality.bench_ours") and not _script_module("bench.lib.selection")
    assert names == ["sys", "bench.quality.bench_ours", "bench_msize"]
    assert _bare_bench_module("bench_msize") and not _bare_bench_module("numpy")
