"""Check that the installed distributions are exactly the versions in requirements.lock.

Fails (exit 1) listing every package whose installed version differs from the lock and every installed
package the lock does not name; packages the lock names but this venv lacks (an optional extra not
installed, e.g. with BFR_SKIP_LOCAL_LLM=1) are listed as a note only. pip, setuptools, wheel and the
project itself are not checked (setuptools is pinned in the lock for what pulls it in, but a new venv
may bring its own). Refresh the lock with scripts/lock.sh.

    .venv/bin/python scripts/check_lock.py [--lock requirements.lock]
"""

from __future__ import annotations

import argparse
import re
import sys
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SKIP = {"pip", "setuptools", "wheel", "bfr-workbench"}


def canon(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def read_lock(path: Path) -> dict[str, str]:
    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name, sep, version = line.partition("==")
        if not sep:
            raise SystemExit(f"check_lock: {path.name}: not an exact pin: {line!r}")
        pins[canon(name)] = version.strip()
    return pins


def installed() -> dict[str, str]:
    return {canon(d.metadata["Name"]): d.version for d in metadata.distributions() if d.metadata["Name"]}


def compare(lock: dict[str, str], have: dict[str, str]) -> tuple[list[str], list[str], list[str]]:
    """(version differences, installed but not locked, locked but not installed), each sorted."""
    differ = [f"{n}: installed {have[n]}, lock {lock[n]}" for n in sorted(have) if n in lock and have[n] != lock[n]]
    unlocked = [f"{n}=={have[n]}" for n in sorted(have) if n not in lock and n not in SKIP]
    missing = [f"{n}=={lock[n]}" for n in sorted(lock) if n not in have]
    return differ, unlocked, missing


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lock", default=str(ROOT / "requirements.lock"))
    args = ap.parse_args(argv)
    differ, unlocked, missing = compare(read_lock(Path(args.lock)), installed())
    if missing:
        print(f"check_lock: note: {len(missing)} locked package(s) not installed here: {', '.join(missing)}")
    if differ or unlocked:
        for line in differ:
            print(f"check_lock: differs: {line}", file=sys.stderr)
        for line in unlocked:
            print(f"check_lock: not in the lock: {line}", file=sys.stderr)
        print("check_lock: the installed versions are not the lock's; install with scripts/setup.sh, or "
              "refresh the lock with scripts/lock.sh if the change is meant", file=sys.stderr)
        return 1
    print(f"check_lock: every installed package matches {Path(args.lock).name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
