"""One module per ``bfr`` subcommand (see ``bfr_core.cli``)."""
