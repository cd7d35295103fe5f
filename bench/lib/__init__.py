"""Code the benches share, imported as ``bench.lib.<module>``: arm runners, commit naming, table writers."""
