"""Explorations kept as records: one-off studies that feed no current README or docs table."""
