"""BFR Workbench: the Streamlit frame (page config, sidebar, navigation). Run: streamlit run app.py

The sidebar picks the store (default: the embedded demo store, built on first start) and the LLM
provider ("offline rules" unless a model is configured), and holds the Refresh button that clears
cached frames. Each page lives in pages/ and only reads widgets, calls bfr_core and renders.
"""

import streamlit as st

from bfr_core.errors import BfrError
from ui import resources as R

st.set_page_config(page_title="BFR Workbench", page_icon=":material/manage_search:", layout="wide")

PAGES = [
    st.Page("pages/home.py", title="Home", icon=":material/home:", default=True),
    st.Page("pages/data.py", title="Data", icon=":material/database:"),
    st.Page("pages/trace.py", title="Trace", icon=":material/account_tree:"),
    st.Page("pages/demo.py", title="Demo", icon=":material/photo_camera:"),
    st.Page("pages/failures.py", title="Failures", icon=":material/table_view:"),
    st.Page("pages/annotate.py", title="Annotate", icon=":material/rule:"),
]
page = st.navigation(PAGES)

with st.sidebar:
    st.text_input("Store (DuckDB file)", value=R.default_store_path(), key="app_store",
                  help="Default: the embedded demo store, built from data/demo.jsonl on first start.")
    options = R.provider_options()
    st.selectbox("LLM provider", options, key="app_provider",
                 help="“offline rules” are deterministic heuristics: no model, no network. "
                      "Configure a model in bfr.toml ([llm] provider/model) to add it here.")
    if R.provider() == R.OFFLINE:
        st.caption("Provider: **offline rules** (no model configured)")
    if st.button("Refresh", icon=":material/refresh:", help="Re-read the store (clears cached tables)"):
        R.refresh()

try:
    store = R.store()
except BfrError as exc:
    st.error(str(exc))
    st.stop()
if store.snapshot_of:
    st.warning(f"{store.snapshot_of} is in use by another process (for example a running `bfr eval`): "
               "showing a read-only snapshot as of its last checkpoint. Nothing can be saved here until "
               "that process ends; then press Refresh.", icon=":material/lock:")

page.run()
