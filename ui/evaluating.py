"""An evaluation started from the app: the very ``bfr eval`` line the page shows, run as a process.

Covers: :func:`start` (the shown command's arguments through this interpreter's ``bfr_core.cli``,
in the repository folder, stdout and stderr to files), :class:`Job` (running or not, the CLI's own
progress line read from its stderr, Cancel, how it ended, and who started it: its ``owner``, whom
the page alone (with the leads, ``ui.access.may_see_job``) shows its command and spend and lets
cancel it), one job per store (one process writes a store at a time) kept in :data:`JOBS` for the
life of the server.
Does not cover: what the page draws (``pages/evaluate.py``), building the command (``ui.commands``).

A process, not a thread: the run holds the store as a terminal ``bfr eval`` does, so the app keeps
reading snapshots meanwhile and a crash of either leaves the other alone; Cancel sends SIGINT, which
the CLI turns into "interrupted" (finished questions stay stored; the same command resumes).
No streamlit import.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bfr_core.ingest.sources import PROJECT
from ui.commands import BFR

JOBS: dict[str, Job] = {}  # resolved store path -> its latest job
_LOCK = threading.Lock()
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
STARTING = "starting…"
# What a run does before its first progress line, and what each of the CLI's bars means
PHASES = {
    "": ("Starting: a new Python process loads bfr_core and the retrieval libraries (10-20 s on 2 busy "
         "cores), then opens the store, waiting while a page of this app holds it (at most 30 s), and reads "
         "the questions. The progress bar appears when the first question starts."),
    "eval": ("Retrieving: every arm over every question; each conversation's first question also computes its "
             "turn vectors when the store has none yet."),
    "answers": "Answering and judging: the answer, judge and Suff@Set calls over every arm's evidence set.",
}


@dataclass
class Job:
    command: str  # as the page shows it
    proc: subprocess.Popen
    out: Path  # stdout: the run's JSON summary
    err: Path  # stderr: the CLI's progress bar and messages
    owner: str = ""  # the team-mode identity of who started it ("" in local mode)
    started: float = field(default_factory=time.monotonic)
    cancelled: bool = False

    @property
    def running(self) -> bool:
        return self.proc.poll() is None

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def progress(self) -> str:
        """The CLI's progress line as it stands (tqdm redraws it with carriage returns)."""
        text = _ANSI.sub("", self.err.read_text(encoding="utf-8", errors="replace")) if self.err.exists() else ""
        pieces = [p.strip() for p in re.split(r"[\r\n]", text) if p.strip()]
        return pieces[-1] if pieces else STARTING

    def phase(self) -> str:
        """What the run is doing now, in words (:data:`PHASES`), read from its progress line."""
        line = self.progress()
        word = "" if line == STARTING else line.split(maxsplit=1)[0].rstrip(":")
        return PHASES.get(word, PHASES[""])  # a note printed before the first bar is still start-up

    def summary(self) -> dict[str, Any] | None:
        """The run's JSON summary (``bfr eval``'s stdout: run id, per-arm figures, spend) once it has
        ended well; ``None`` before, or when it printed none."""
        if self.running or not self.out.exists():
            return None
        try:
            data = json.loads(self.out.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) and "run_id" in data else None

    def cancel(self, wait_s: float = 10.0) -> None:
        """Stop it as Ctrl-C would (finished questions stay stored); terminate it if it does not stop."""
        if not self.running:
            return
        self.cancelled = True
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(wait_s)
        except subprocess.TimeoutExpired:
            self.proc.terminate()
            self.proc.wait(wait_s)

    def outcome(self) -> tuple[bool, str]:
        """(ended well, its last message line): only once it has ended."""
        code = self.proc.poll()
        lines = [ln for ln in _ANSI.sub("", self.err.read_text(encoding="utf-8", errors="replace")).splitlines()
                 if ln.strip() and "\r" not in ln] if self.err.exists() else []
        last = lines[-1].strip() if lines else ""
        if self.cancelled:
            return False, "cancelled: the questions finished so far are stored; the same command resumes the run"
        return code == 0, last or f"exit code {code}"


def argv_of(command: str) -> list[str]:
    """The shown command as this interpreter runs it: ``.venv/bin/bfr ARGS`` -> ``python -m bfr_core.cli ARGS``."""
    program, *args = shlex.split(command)
    if program != BFR:
        raise ValueError(f"not a bfr command: {command}")
    return [sys.executable, "-m", "bfr_core.cli", *args]


def discard(job: Job) -> None:
    """Remove an ended job's folder of output files (the page has read what it shows from them)."""
    if not job.running:
        shutil.rmtree(job.out.parent, ignore_errors=True)


@atexit.register
def _discard_all() -> None:
    """At the server's exit, no ended job's ``bfr-app-eval-*`` folder is left in the temporary folder."""
    for job in list(JOBS.values()):
        discard(job)


def start(store_key: str, command: str, owner: str = "") -> Job:
    """Run ``command`` (a line of ``ui.commands``) in the background for the store ``store_key`` on
    behalf of ``owner``; refuses while that store's previous job still runs (without naming its
    command: its starter may be someone else)."""
    with _LOCK:
        old = JOBS.get(store_key)
        if old is not None and old.running:
            raise RuntimeError("an evaluation of this store is still running; start this one when it has ended")
        if old is not None:
            discard(old)  # one folder per store at most: the previous job's, kept while the page shows it
        folder = Path(tempfile.mkdtemp(prefix="bfr-app-eval-"))
        out, err = folder / "stdout.json", folder / "stderr.txt"
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(PROJECT), os.environ.get("PYTHONPATH")]))}
        with open(out, "wb") as fo, open(err, "wb") as fe:
            proc = subprocess.Popen(argv_of(command), cwd=PROJECT, stdout=fo, stderr=fe, stdin=subprocess.DEVNULL,
                                    env=env)
        JOBS[store_key] = job = Job(command, proc, out, err, owner)
        return job
