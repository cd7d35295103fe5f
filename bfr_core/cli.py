"""The ``bfr`` command line. Each subcommand lives in ``bfr_core/commands/<name>.py`` and exposes
``add_arguments(parser)`` and ``run(args) -> int``; only the chosen one is imported, so the CLI
starts fast. Errors a user can fix are printed as one line on stderr with exit code 2, never a
traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from types import ModuleType

from bfr_core.errors import BfrError

COMMANDS: dict[str, tuple[str, str]] = {
    "ingest": ("bfr_core.commands.ingest", "load a benchmark file into a store"),
    "eval": ("bfr_core.commands.eval", "run arms over a benchmark and write the JSON contract"),
    "sweep": ("bfr_core.commands.sweep", "budget grid C0..C9: quality-versus-cost frontier"),
    "trace": ("bfr_core.commands.trace", "run or show one question's step-by-step trace"),
    "report": ("bfr_core.commands.report", "paper-style tables with paired tests for a run"),
    "label-export": ("bfr_core.commands.label_export", "export sufficiency labels (CSV / JSONL)"),
    "import-run": ("bfr_core.commands.import_run", "another system's run file as an arm of a run"),
    "export-run": ("bfr_core.commands.export_run", "a run's arms as TREC / JSONL, and its qrels"),
    "export-data": ("bfr_core.commands.export_data", "what each question searches, as JSONL, for another system"),
    "import-answers": ("bfr_core.commands.import_answers", "another system's answers (and verdicts) as an arm"),
    "judge": ("bfr_core.commands.judge", "rejudge every answer of a run with a judge (cached, resumable)"),
    "judges": ("bfr_core.commands.judges", "how the judges of a run agree, accept and err, per key"),
    "suspect-keys": ("bfr_core.commands.suspect_keys", "answer-key entries that look wrong from the text alone"),
}


def command_parser(name: str) -> tuple[ModuleType, argparse.ArgumentParser]:
    """The module of subcommand ``name`` and its argument parser (what :func:`main` parses with)."""
    module_name, help_text = COMMANDS[name]
    module = importlib.import_module(module_name)
    cmd = argparse.ArgumentParser(prog=f"bfr {name}", description=help_text)
    module.add_arguments(cmd)
    return module, cmd


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(prog="bfr", description="BFR Workbench command line")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (_, help_text) in COMMANDS.items():
        sub.add_parser(name, help=help_text, add_help=False)
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in COMMANDS:
        if argv and argv[0] not in ("-h", "--help"):
            parser.print_usage(sys.stderr)
            print(f"bfr: error: unknown command '{argv[0]}'", file=sys.stderr)
            return 2
        parser.print_help()
        return 0
    module, cmd = command_parser(argv[0])
    args = cmd.parse_args(argv[1:])
    try:
        return int(module.run(args) or 0)
    except BfrError as exc:
        print(f"bfr {argv[0]}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"bfr {argv[0]}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader closed the pipe (bfr report | head): stop quietly, as SIGPIPE would
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit's flush
        return 141


if __name__ == "__main__":
    raise SystemExit(main())
