"""Test files are named after what they test: every ``tests/test_X.py`` names a module, or is a listed
cross-cutting check with its reason.

``X`` names a module when it is the module's dotted path joined by "_", whole or from any package down
(``bfr_core/retrieval/views/bm25.py`` is named by ``test_views_bm25`` and ``test_bm25``), among the
modules of ``bfr_core/``, ``ui/``, ``pages/``, ``bench/`` and ``scripts/``, and ``app.py``.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("bfr_core", "ui", "pages", "bench", "scripts")

# Files that test a property of many modules at once, not one module: the reason for each.
CROSS_CUTTING = {
    "code_text": "comments and docstrings of every product module say no history",
    "docs": "the README and docs/ pages: length, history-free, links that resolve",
    "import_cycles": "no import circle among all of bfr_core's modules",
    "layers": "every bfr_core import runs down the layers",
    "local_imports": "function-local imports across bfr_core, each with its reason",
    "private_imports": "no module imports another module's private names",
    "reexports": "no module imports a name only to hand it on",
    "one_home": "primitives (rankings, z-scores, fusions, scope payloads) defined in one module each",
    "integrity": "no arm reads a label hidden in ids, names or the store (every arm)",
    "readme_tables": "the measured tables in README and docs/ equal their generators' output",
    "cli_outputs": "every command's output options go through outfile (bench/checks/bench_reliability runs it by name)",
    "test_names": "this check of the tests' own names",
    "bench_layout": "bench/'s packages: no sys.path edit, no bench script imported by another or by a test",
    "ours_sufficiency_plot": "plots.sufficiency_gap together with the pooling of the bench that draws it",
}
# File-name prefixes of suites that span modules on purpose.
CROSS_CUTTING_PREFIXES = {
    "reliability_": "the fault-injection suite (store, CLI, crashes, secrets, ...), run by name by the reliability bench",
}


def module_names() -> set[str]:
    """Every name a test file may carry: each module's path parts joined by "_", from any depth."""
    names = {"app"}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            names.update("_".join(parts[i:]) for i in range(len(parts)))
    return names


def unmatched(stems: list[str], names: set[str]) -> list[str]:
    """The test-file stems (``test_X``) whose ``X`` names no module and is not a listed cross-cutting check."""
    out = []
    for stem in stems:
        x = stem.removeprefix("test_")
        if x in names or x in CROSS_CUTTING or x.startswith(tuple(CROSS_CUTTING_PREFIXES)):
            continue
        out.append(stem)
    return out


def test_every_test_file_names_a_module_or_a_listed_check():
    stems = sorted(p.stem for p in (ROOT / "tests").glob("test_*.py"))
    bad = unmatched(stems, module_names())
    assert not bad, f"test files named after no module (rename after the module they test, or list why): {bad}"


def test_the_rule_reads_paths_from_any_depth():
    names = module_names()
    assert {"views_bm25", "bm25", "retrieval_views_bm25", "llm_cache", "app"} <= names
    assert unmatched(["test_views_bm25", "test_one_home", "test_reliability_store", "test_no_such_thing"], names) \
        == ["test_no_such_thing"]


def test_every_listed_check_exists():
    stems = {p.stem.removeprefix("test_") for p in (ROOT / "tests").glob("test_*.py")}
    assert set(CROSS_CUTTING) <= stems, set(CROSS_CUTTING) - stems
    assert all(any(s.startswith(p) for s in stems) for p in CROSS_CUTTING_PREFIXES)
