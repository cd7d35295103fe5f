"""Streamlit-side helpers of the BFR Workbench app (the app edge; ``bfr_core`` never imports this).

* ``resources``: every ``st.cache_resource`` (store, LLM) and ``st.cache_data`` (frames) wrapper,
  the store path and provider the sidebar chose, the Refresh action, the navigation-frame guard.
* ``widgets``: turns rendered as escaped text with speaker and date, their whole session in a
  dialog, gold marks; the ``st.progress`` adapter for ``bfr_core.progress.Progress`` callbacks.
* ``steps``: one renderer per Trace step kind (pool, requirements, context, lattice, ...), shared by
  the Trace and Demo pages; ``runner``: Next step / Run all over one ``pipeline.run`` result.
* ``tables``: the Failures page's SQL and pandas (no streamlit import, so bench/ can time it).
* ``answering``: final answer and judge through ``bfr_core.roles``; ``democase``: which question
  the Demo page replays, its gold ranks per view and the mined case gallery (cached with
  ``st.cache_data`` there; Refresh clears them with the rest).
* ``commands``: the exact ``.venv/bin/bfr ingest`` / ``eval`` / ``sweep`` lines the pages show for
  the open store; ``evaluating``: one of those ``eval`` lines run as a background process (the
  Evaluate page); ``ingesting``: the ingest bar's text (stage, count, ETA), errors in the GUI's
  words and what a stopped ingest left; ``storepath``: the sidebar path check (no silent new store)
  and the size on disk with the ``.wal``; ``sufficiency``: where the measured sufficiency gap by budget
  lives and what the Trace page draws of it. These five import no streamlit. ``keys``: a question whose
  answer key an overlay disputes, marked on Trace and Failures with the finding.
"""
