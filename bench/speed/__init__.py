"""Benches that time the workbench (ingest, embedding, the app, the CLI, the local model, the suite)."""
