"""Streamlit-side helpers of the BFR Workbench app (the app edge; ``bfr_core`` never imports this).

* ``resources``: every ``st.cache_resource`` (store, LLM) and ``st.cache_data`` (frames) wrapper,
  the store path and provider the sidebar chose, and the Refresh action.
* ``widgets``: turns rendered as escaped text with speaker, date and their whole session on demand;
  gold marks; the ``st.progress`` adapter for ``bfr_core.progress.Progress`` callbacks.
* ``steps``: one renderer per Trace step kind (pool, requirements, context, lattice, ...), shared by
  the Trace and Demo pages.
* ``tables``: the Failures page's SQL and pandas (no streamlit import, so bench/ can time it).
* ``answering``: final answer and judge through ``bfr_core.judges``.
"""
