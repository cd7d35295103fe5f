"""The layout of ``bench/`` (bench/lib/layout.py reads it): packages run as modules from the repository
root, shared code only in ``bench/lib``. No bench file edits ``sys.path``; no bench module imports a
script of ``quality/``, ``speed/``, ``checks/`` or ``archive/``; tests import bench code only from
``bench.lib``; every script of ``quality/``, ``speed/`` and ``checks/`` gives its run line
(``.venv/bin/python -m bench.<package>.<script>``) in its docstring."""

from __future__ import annotations

import ast
from pathlib import Path

from bench.lib import layout as L

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"


def _files() -> dict[str, str]:
    paths = [p for d in ("bench", "tests") for p in (ROOT / d).rglob("*.py")
             if "out" not in p.relative_to(ROOT).parts[1:2] and "__pycache__" not in p.parts]
    return {p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8") for p in paths}


def test_bench_is_a_package_of_the_five_subpackages():
    assert (BENCH / "__init__.py").exists()
    for package in L.PACKAGES:
        assert (BENCH / package / "__init__.py").exists(), package
    loose = [p.name for p in BENCH.glob("*.py") if p.name != "__init__.py"]
    assert not loose, f"bench files outside the subpackages: {loose}"


def test_no_bench_file_edits_sys_path_or_needs_e402():
    counts = L.counts(_files())
    assert counts["sys_path_lines"] == 0 and counts["noqa_e402"] == 0, counts


def test_no_bench_module_imports_a_bench_script():
    found = L.bench_script_imports(_files())
    assert not found, found


def test_tests_import_bench_code_only_from_bench_lib():
    found = L.imports_in_tests(_files(), outside=True)
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


def test_the_counts_see_what_they_forbid():
    files = {
        "bench/bench_x.py": "import sys\nsys.path.insert(0, 'bench')\nimport bench_y  # noqa: E402\n",
        "bench/bench_y.py": "def f():\n    from bench.quality import bench_ours\n",
        "bench/lib/z.py": "from bench.lib import git_commit\n",
        "bench/out/old.py": "import sys\nsys.path.insert(0, '.')\n",
        "tests/test_a.py": "import bench.lib.z\nimport bench_y\nfrom bench.speed.bench_ingest import main\n",
        "tests/test_b.py": "import numpy\n",
    }
    counts = L.counts(files)
    assert counts["loose_files"] == 2 and counts["per_package"]["lib"] == 1
    assert (counts["sys_path_lines"], counts["sys_path_files"], counts["noqa_e402"]) == (1, 1, 1)
    assert L.bench_script_imports(files) == ["bench/bench_x.py:3 bench_y", "bench/bench_y.py:2 bench.quality.bench_ours"]
    assert L.imports_in_tests(files, outside=True) == ["tests/test_a.py:2 bench_y",
                                                       "tests/test_a.py:3 bench.speed.bench_ingest.main"]
    assert counts["test_files_importing_bench_code"] == 1 and counts["test_files_importing_outside_lib"] == 1
